package lua_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cairn/modules/lua"
	"cairn/node/config"
)

// Ensure the Lua 5.3/5.4 syntax and libraries modules written for Prosody
// 0.12 use give Lua 5.4's answers (checked against Debian's lua5.4 5.4.4;
// gopher-lua prints the float 3.0 as 3), errors included.
func TestLua_Lua54_SyntaxAndLibraries(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"idiv", `print(7 // 2, -7 // 2, 7 // -2, 7.5 // 2, -7.5 // 2, "10" // 3, 2 ^ 2 // 3)`, "3\t-4\t-4\t3\t-4\t3\t1"},
		{"bitwise", `print(5 & 3, 5 | 3, 5 ~ 3, ~5, ~0, 0xFF & 0x0F)`, "1\t7\t6\t-6\t-1\t15"},
		{"shifts", `print(1 << 4, 256 >> 4, -1 >> 60, 1 << 64, 1 << -1, 2 >> -1, 1 << 62)`, "16\t16\t15\t0\t0\t4\t4611686018427387904"},
		{"precedence", `print(1 | 2 ~ 3 & 4 << 1, 2 + 3 & 7, ~1 + 2, 1 < 2 == true, 3 & 2 == 2)`, "3\t5\t0\ttrue\ttrue"},
		{"escape z", "print(\"a\\z\n      b\", \"c\\z   d\")", "ab\tcd"},
		{"escape x", `print("\x41\x62", "\65\066")`, "Ab\tAB"},
		{"escape u", `print("\u{48}\u{E9}\u{20AC}\u{1F600}", #"\u{7FFFFFFF}", #"\u{D800}")`, "Hé€😀\t6\t3"},
		{"table.unpack pack", `print(table.unpack({1, 2, 3})) print(table.pack(1, nil, 3).n, select("#", table.unpack({1, nil, 3}, 1, 3)))`, "1\t2\t3\n3\t3"},
		{"table.move", `print(table.concat(table.move({1, 2, 3, 4, 5}, 2, 4, 1), ","), table.concat(table.move({1, 2, 3}, 1, 3, 2), ","), table.concat(table.move({1, 2}, 1, 2, 3, {9, 8}), ","))`, "2,3,4,4,5\t1,1,2,3\t9,8,1,2"},
		{"utf8", `print(utf8.char(72, 233, 8364, 128512), utf8.len("héllo"), utf8.len("\xff")) print(utf8.codepoint("héllo", 1, -1)) print(utf8.offset("héllo", 3), utf8.offset("héllo", -1), utf8.offset("héllo", 0, 3))`,
			"Hé€😀\t5\tnil\t1\n104\t233\t108\t108\t111\n4\t6\t2"},
		{"utf8 codes charpattern", `local w = {} for p, c in utf8.codes("hé€") do w[#w+1] = p .. ":" .. c end for c in ("hé€"):gmatch(utf8.charpattern) do w[#w+1] = #c end print(table.concat(w, " "))`, "1:104 2:233 4:8364 1 2 3"},
		{"metamethods", `local o = setmetatable({}, {__band = function() return "band" end, __idiv = function() return "idiv" end, __bnot = function() return "bnot" end, __shl = function() return "shl" end}) print(o & 1, 1 & o, o // 2, ~o, o << 1)`, "band\tband\tidiv\tbnot\tshl"},
		{"const", `local a <const>, b = 1, 2 local c <const> = a + b print(a, b, c)`, "1\t2\t3"},
		{"math", `print(math.type(3), math.type(3.5), math.type("3"), math.tointeger(3), math.tointeger(3.5), math.tointeger("3"), math.tointeger("x"), math.ult(1, -1), math.ult(-1, 1), (pcall(math.type)))`,
			"integer\tfloat\tnil\t3\tnil\t3\tnil\ttrue\tfalse\tfalse"},
		{"goto", `for i = 1, 3 do if i == 2 then goto continue end print(i) ::continue:: end`, "1\n3"},
		{"errors", `for _, f in ipairs{function() return 1.5 & 1 end, function() return 2^63 | 0 end, function() return 1 // 0 end,
			function() return {} | 1 end, function() return "3" & 1 end, function() return "x" // 1 end, function() return ~1.5 end} do print(select(2, pcall(f))) end`,
			"@s.lua:1: number has no integer representation\n@s.lua:1: number has no integer representation\n@s.lua:1: attempt to divide by zero\n" +
				"@s.lua:2: attempt to perform bitwise operation on a table value\n@s.lua:2: attempt to perform bitwise operation on a string value\n" +
				"@s.lua:2: attempt to idiv a 'string' with a 'number'\n@s.lua:2: number has no integer representation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			if err := lua.RunSnippet(tc.src, "s.lua", &out, time.Second, 32<<20); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSuffix(out.String(), "\n"); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// Ensure malformed Lua 5.3 escapes fail the load with the file and line,
// and a runaway table.move is stopped by the time cap.
func TestLua_Lua54_EscapeErrorsAndCaps(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"local a = 1\nlocal s = \"\\xZZ\"", `mod_e.lua:2: hexadecimal digit expected`},
		{"local s = \"\\u{110000000}\"", `mod_e.lua:1: UTF-8 value too large`},
		{"local s = \"ab\\u{41\"", `mod_e.lua:1: missing '}' in \u{xxxx} near 'ab'`},
		{"local s = \"\\300\"", `mod_e.lua:1: decimal escape too large`},
		{"local x = 1 & & 2", `mod_e.lua:1: syntax error near '&'`},
		{"local f <close> = nil", `mod_e.lua:1: <close> variables are not supported`},
		{"local a, x <foo> = 1", `mod_e.lua:1: unknown attribute 'foo' near 'foo'`},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "mod_e.lua"), []byte(tc.src), 0o644); err != nil {
			t.Fatal(err)
		}
		h, _ := startHost(t, []string{"e"}, func(c *config.ModulesConfig) { c.Dir = dir })
		if err := h.Failed()["e"]; err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.src, err, tc.want)
		}
	}
	var out strings.Builder
	err := lua.RunSnippet(`table.move({}, 1, 2^52, 1, {})`, "move.lua", &out, 100*time.Millisecond, 32<<20)
	if err == nil {
		t.Errorf("table.move over 2^52 elements finished")
	}
}
