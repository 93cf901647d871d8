// Package luaparse is gopher-lua v1.1.1's parser (its parse package, MIT
// licence in LICENSE) with what Lua 5.2 to 5.4 added to the syntax that
// Prosody modules use:
//
//   - the string escapes \z (skip the white space that follows), \xXX and
//     \u{XXX}; a decimal escape above 255 is an error;
//   - the operators // (floor division), & | ~ << >> (bitwise) and unary ~,
//     at Lua 5.3's precedences;
//   - Lua 5.4's local attributes: <const> is taken as a plain local
//     (assigning one is not refused), <close> and unknown names are
//     errors.
//
// The operators come out as ast.ArithmeticOpExpr with Operator "//", "&",
// "|", "~", "<<" or ">>", and as UnaryBNotExpr; gopher-lua's compiler
// knows neither, so the caller rewrites them into calls before compiling
// (modules/lua/compile.go does).
//
// # Files
//
//   - lexer.go: the scanner, Parse and Dump.
//   - parser.go.y: the grammar; parser.go is generated from it by goyacc
//     (golang.org/x/tools/cmd/goyacc): `goyacc -o parser.go parser.go.y`
//     in this folder. Three shift/reduce conflicts are expected (Lua's
//     ambiguity of a call on a new line), as in gopher-lua's.
//   - ast.go: the syntax node for unary ~.
package luaparse
