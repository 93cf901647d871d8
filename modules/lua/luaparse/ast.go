// ast.go: the syntax node gopher-lua's ast package has no type for.

package luaparse

import "github.com/yuin/gopher-lua/ast"

// UnaryBNotExpr is Lua 5.3's unary ~ (bitwise not). gopher-lua's compiler
// does not know it: the caller rewrites it before compiling, as it does
// the operators //, &, |, binary ~, << and >> (ast.ArithmeticOpExpr with
// those Operator strings).
type UnaryBNotExpr struct {
	ast.ExprBase
	Expr ast.Expr
}
