package lua

import (
	"context"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// FuzzLua_Snippet compiles Lua snippets as module code is compiled (`..`
// bounded, nesting checked) and runs them against the bounded string and
// table builtins under small caps: no snippet may panic the process, run past
// the time cap by much, or crash the Go stack.
func FuzzLua_Snippet(f *testing.F) {
	for _, s := range []string{
		`return ("x"):rep(1000):gsub(".", ("y"):rep(64))`,
		`return ("a"):rep(30):find(("a*"):rep(10) .. "b")`,
		`return ("%d %5.2f %q %s"):format(1, 2.5, "a\n", {})`,
		`local t = {} for w in ("a b c"):gmatch("%a") do t[#t+1] = w end return table.concat(t, ",")`,
		`return ("(a(b)c)"):match("%b()"), ("THE (quick) fox"):find("%f[%a]%a+")`,
		`local function f(n) return f(n + 1) end return pcall(f, 1)`,
		`return ("x"):find("[%a-z]"), ("]"):match("[]]"), ("a.b"):gsub("%.", "%%")`,
		`local s = ("x"):rep(1000) return s..s..s..s, 1 .. 2, setmetatable({}, {__concat = function() return "c" end}) .. "x"`,
		`local s = "x" for i = 1, 30 do s = s .. s end return #s`,
		`return loadstring(("do "):rep(300) .. ("end "):rep(300)), loadstring("return " .. ("{"):rep(150) .. ("}"):rep(150))`,
		`local n = 0 return load(function() n = n + 1 if n < 100 then return "x = 1 " end end)`,
		`return 7 // 2, 5 & 3 | 1 ~ 2 << 3 >> 1, ~0, "\z  a\x41\u{20AC}", utf8.len("h\u{E9}"), table.move({1, 2}, 1, 2, 2)`,
		`return pcall(function() return 1.5 & 1 end), utf8.codepoint(("\u{7FF}"):rep(100), 1, -1)`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		L := lua.NewState(lua.Options{CallStackSize: 200, RegistryMaxSize: 1 << 16})
		defer L.Close()
		installBounded(L)
		installCompile(L)
		fn, err := compile(L, src, "snippet")
		if err != nil {
			return
		}
		lm := limits{maxTime: 50 * time.Millisecond, maxMem: 8 << 20}
		start := time.Now()
		_ = lm.run(context.Background(), L, func() error {
			L.Push(fn)
			return L.PCall(0, lua.MultRet, keepError(L))
		})
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%q ran %v with a 50ms cap", src, d)
		}
	})
}
