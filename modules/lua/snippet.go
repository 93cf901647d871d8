// snippet.go: running a chunk as module code runs, outside a module
// (for scripts/luacmp).

package lua

import (
	"context"
	"io"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// RunSnippet compiles src with cairn's compiler and runs it with the
// libraries, bounded builtins and stack sizes of a module's state, under
// the given time and memory caps; print writes to out. There is no
// module object, require or node API.
func RunSnippet(src, name string, out io.Writer, maxTime time.Duration, maxMem int64) error {
	L := lua.NewState(stateOptions)
	defer L.Close()
	openLibs(L)
	L.SetGlobal("print", L.NewFunction(func(L *lua.LState) int {
		parts := make([]string, L.GetTop())
		for i := range parts {
			parts[i] = L.ToStringMeta(L.Get(i + 1)).String()
		}
		io.WriteString(out, strings.Join(parts, "\t")+"\n")
		return 0
	}))
	installBounded(L)
	installCompile(L)
	fn, err := compile(L, src, "@"+name)
	if err != nil {
		return err
	}
	lm := limits{maxTime: maxTime, maxMem: maxMem}
	return lm.run(context.Background(), L, func() error {
		L.Push(fn)
		return L.PCall(0, 0, keepError(L))
	})
}
