// compile.go: turning Lua source into functions within the caps. Two
// things the builtins of bounded.go cannot reach happen here:
//
//   - The `..` operator is an instruction of gopher-lua's VM: one
//     instruction may join any number of strings (s..s..s.. builds 64 times
//     s at once), out of sight of the time and memory caps. Every
//     concatenation is rewritten, before compiling, into a call of a
//     builtin that checks the size of what it builds first (boundedConcat).
//   - Parsing and compiling run in Go, where the caps are not looked at: a
//     source nested 200,000 deep took 40 s and 300 MB. A source is refused
//     when it nests deeper than maxNesting, and its size is reserved
//     against the memory cap (compileCost bytes per source byte) before it
//     is parsed. load and loadstring go through the same door as module
//     files.

package lua

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"

	"cairn/modules/lua/luaparse"
)

const (
	// maxNesting bounds brackets, blocks and unary operators in a source
	// (Lua's own C parser stops at 200 C levels).
	maxNesting = 200
	// compileCost is the memory reserved per source byte while a chunk
	// is parsed and compiled (its syntax tree and prototypes).
	compileCost = 64
	// concatName is the global the rewritten `..` calls: not an
	// identifier, so no Lua code names it by accident.
	concatName = "cairn concat"
	// concatArgs is how many operands one call joins; longer chains nest.
	concatArgs = 64
)

// compile parses src (named name in messages) and returns it as a function
// of L, with every `..` bounded. Errors read as gopher-lua's. Inside a
// call, reserve the memory first (compileIn).
func compile(L *lua.LState, src, name string) (*lua.LFunction, error) {
	if err := checkNesting(src); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	chunk, err := luaparse.Parse(strings.NewReader(src), name)
	if err != nil {
		return nil, err
	}
	rewriteStmts(chunk)
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		return nil, err
	}
	return L.NewFunctionFromProto(proto), nil
}

// installCompile puts the bounded concatenation and the load functions
// that compile through compile into L.
func installCompile(L *lua.LState) {
	L.SetGlobal(concatName, L.NewFunction(boundedConcat))
	installOps53(L)
	L.SetGlobal("loadstring", L.NewFunction(func(L *lua.LState) int {
		return loaded(L, L.CheckString(1), L.OptString(2, "<string>"))
	}))
	L.SetGlobal("load", L.NewFunction(func(L *lua.LState) int {
		fn := L.CheckFunction(1)
		name := L.OptString(2, "?")
		b := newBuilder(L, "load")
		top := L.GetTop()
		for {
			L.SetTop(top)
			L.Push(fn)
			L.Call(0, 1)
			piece := L.Get(-1)
			if piece == lua.LNil {
				break
			}
			if !lua.LVCanConvToString(piece) {
				L.Push(lua.LNil)
				L.Push(lua.LString("reader function must return a string"))
				return 2
			}
			s := lua.LVAsString(piece)
			if s == "" {
				break
			}
			b.add(s)
		}
		return loaded(L, b.String(), name)
	}))
}

// loaded pushes load's results: the function, or nil and the message.
// The compilation's memory is reserved against the call's cap first.
func loaded(L *lua.LState, src, name string) int {
	meterOf(L).reserve(L, int64(len(src))*compileCost, "compiling "+name)
	fn, err := compile(L, src, name)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	L.Push(fn)
	return 1
}

// boundedConcat joins its arguments as `..` does (right to left, with
// __concat for operands that are not strings or numbers), checking the
// size of each result against the memory cap before building it.
func boundedConcat(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		L.Push(lua.LString(""))
		return 1
	}
	m := meterOf(L)
	rhs := L.Get(n)
	for i := n - 1; i >= 1; {
		lhs := L.Get(i)
		if !lua.LVCanConvToString(lhs) || !lua.LVCanConvToString(rhs) {
			op := L.GetMetaField(lhs, "__concat")
			if op == lua.LNil {
				op = L.GetMetaField(rhs, "__concat")
			}
			if op.Type() != lua.LTFunction {
				L.RaiseError("cannot perform concat operation between %v and %v", lhs.Type().String(), rhs.Type().String())
			}
			L.Push(op)
			L.Push(lhs)
			L.Push(rhs)
			L.Call(2, 1)
			rhs = L.Get(-1)
			L.Pop(1)
			i--
			continue
		}
		// Join the run of strings and numbers ending at i+1.
		j := i
		size := int64(len(lua.LVAsString(rhs)))
		for j >= 1 && lua.LVCanConvToString(L.Get(j)) {
			size += int64(len(lua.LVAsString(L.Get(j))))
			j--
		}
		m.reserve(L, size, "concatenation")
		m.step(L, int(size>>10)+i-j)
		var b strings.Builder
		b.Grow(int(size))
		for k := j + 1; k <= i; k++ {
			b.WriteString(lua.LVAsString(L.Get(k)))
		}
		b.WriteString(lua.LVAsString(rhs))
		rhs = lua.LString(b.String())
		i = j
	}
	L.Push(rhs)
	return 1
}

// checkNesting refuses a source whose brackets, blocks or runs of unary
// operators nest deeper than maxNesting.
func checkNesting(src string) error {
	depth, unary, at := 0, 0, 0
	scanCode(src, func(tok string, line int) bool {
		switch tok {
		case "function", "do", "if", "repeat", "(", "[", "{":
			depth++
			unary = 0
		case "end", "until", ")", "]", "}":
			depth--
			unary = 0
		case "not", "-", "#", "~":
			unary++
		default:
			unary = 0
		}
		if depth > maxNesting || unary > maxNesting {
			at = line
			return false
		}
		return true
	})
	if at > 0 {
		return fmt.Errorf("line %d: nested more than %d levels deep", at, maxNesting)
	}
	return nil
}

// rewriteStmts replaces every `..` in stmts by a call of concatName, and
// every Lua 5.3 operator (//, &, |, ~, <<, >>, unary ~) by a call of its
// function (ops53.go).
func rewriteStmts(stmts []ast.Stmt) {
	for _, s := range stmts {
		rewriteStmt(s)
	}
}

func rewriteStmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		rewriteExprs(s.Lhs)
		rewriteExprs(s.Rhs)
	case *ast.LocalAssignStmt:
		rewriteExprs(s.Exprs)
	case *ast.FuncCallStmt:
		s.Expr = rewrite(s.Expr)
	case *ast.DoBlockStmt:
		rewriteStmts(s.Stmts)
	case *ast.WhileStmt:
		s.Condition = rewrite(s.Condition)
		rewriteStmts(s.Stmts)
	case *ast.RepeatStmt:
		s.Condition = rewrite(s.Condition)
		rewriteStmts(s.Stmts)
	case *ast.IfStmt:
		s.Condition = rewrite(s.Condition)
		rewriteStmts(s.Then)
		rewriteStmts(s.Else)
	case *ast.NumberForStmt:
		s.Init, s.Limit = rewrite(s.Init), rewrite(s.Limit)
		if s.Step != nil {
			s.Step = rewrite(s.Step)
		}
		rewriteStmts(s.Stmts)
	case *ast.GenericForStmt:
		rewriteExprs(s.Exprs)
		rewriteStmts(s.Stmts)
	case *ast.FuncDefStmt:
		if s.Name != nil {
			if s.Name.Func != nil {
				s.Name.Func = rewrite(s.Name.Func)
			}
			if s.Name.Receiver != nil {
				s.Name.Receiver = rewrite(s.Name.Receiver)
			}
		}
		rewriteStmts(s.Func.Stmts)
	case *ast.ReturnStmt:
		rewriteExprs(s.Exprs)
	}
}

func rewriteExprs(es []ast.Expr) {
	for i, e := range es {
		es[i] = rewrite(e)
	}
}

// rewrite returns e with its concatenations replaced; chains
// (a..b..c, right-nested in the tree) are walked in a loop and become one
// call per concatArgs operands.
func rewrite(e ast.Expr) ast.Expr {
	switch x := e.(type) {
	case *ast.StringConcatOpExpr:
		var ops []ast.Expr
		var cur ast.Expr = x
		for {
			c, ok := cur.(*ast.StringConcatOpExpr)
			if !ok {
				break
			}
			ops = append(ops, rewrite(c.Lhs))
			cur = c.Rhs
		}
		ops = append(ops, rewrite(cur))
		return concatCall(x, ops)
	case *ast.AttrGetExpr:
		x.Object, x.Key = rewrite(x.Object), rewrite(x.Key)
	case *ast.TableExpr:
		for _, f := range x.Fields {
			if f.Key != nil {
				f.Key = rewrite(f.Key)
			}
			f.Value = rewrite(f.Value)
		}
	case *ast.FuncCallExpr:
		if x.Func != nil {
			x.Func = rewrite(x.Func)
		}
		if x.Receiver != nil {
			x.Receiver = rewrite(x.Receiver)
		}
		rewriteExprs(x.Args)
	case *ast.LogicalOpExpr:
		x.Lhs, x.Rhs = rewrite(x.Lhs), rewrite(x.Rhs)
	case *ast.RelationalOpExpr:
		x.Lhs, x.Rhs = rewrite(x.Lhs), rewrite(x.Rhs)
	case *ast.ArithmeticOpExpr:
		x.Lhs, x.Rhs = rewrite(x.Lhs), rewrite(x.Rhs)
		if name, ok := ops53[x.Operator]; ok {
			return opCall(x, name, x.Lhs, x.Rhs)
		}
	case *luaparse.UnaryBNotExpr:
		return opCall(x, ops53["~u"], rewrite(x.Expr))
	case *ast.UnaryMinusOpExpr:
		x.Expr = rewrite(x.Expr)
	case *ast.UnaryNotOpExpr:
		x.Expr = rewrite(x.Expr)
	case *ast.UnaryLenOpExpr:
		x.Expr = rewrite(x.Expr)
	case *ast.FunctionExpr:
		rewriteStmts(x.Stmts)
	}
	return e
}

// opCall is the call of the global name on args, at the line of at; a
// call or `...` operand gives one value, as under an operator.
func opCall(at ast.Expr, name string, args ...ast.Expr) ast.Expr {
	for _, a := range args {
		switch o := a.(type) {
		case *ast.FuncCallExpr:
			o.AdjustRet = true
		case *ast.Comma3Expr:
			o.AdjustRet = true
		}
	}
	fn := &ast.IdentExpr{Value: name}
	call := &ast.FuncCallExpr{Func: fn, Args: args, AdjustRet: true}
	for _, n := range []interface {
		SetLine(int)
		SetLastLine(int)
	}{fn, call} {
		n.SetLine(at.Line())
		n.SetLastLine(at.LastLine())
	}
	return call
}

// concatCall is the call joining ops, at the line of at. An operand that
// is a call or `...` gives one value, as under `..`.
func concatCall(at ast.Expr, ops []ast.Expr) ast.Expr {
	if len(ops) > concatArgs {
		ops = append(ops[:concatArgs-1:concatArgs-1], concatCall(at, ops[concatArgs-1:]))
	}
	return opCall(at, concatName, ops...)
}
