package commands_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"cairn/commands"
)

// optionGetters are the Request methods that read an option by name.
var optionGetters = map[string]bool{"Bool": true, "String": true, "Strings": true, "Int": true, "IsSet": true}

// optReads finds, in the package's sources, the option names each function
// reads: r.Bool("x") and the other getters, r.Opts["x"], and (through the
// package's own functions it calls) what those read; a helper that reads
// an option named by its parameter (streamIf(opt)) counts the literal
// passed at each call site.
type optReads struct {
	fset    *token.FileSet
	funcs   map[string]*ast.FuncDecl   // top-level functions and methods, by name
	methods map[string][]*ast.FuncDecl // methods by name (any receiver)
	lits    []*ast.FuncLit
	memo    map[ast.Node]map[string]bool
}

func loadOptReads(t *testing.T) *optReads {
	t.Helper()
	o := &optReads{fset: token.NewFileSet(), funcs: map[string]*ast.FuncDecl{}, methods: map[string][]*ast.FuncDecl{},
		memo: map[ast.Node]map[string]bool{}}
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		abs, _ := filepath.Abs(p)
		f, err := parser.ParseFile(o.fset, abs, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				if fd.Recv == nil {
					o.funcs[fd.Name.Name] = fd
				} else {
					o.methods[fd.Name.Name] = append(o.methods[fd.Name.Name], fd)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if fl, ok := n.(*ast.FuncLit); ok {
				o.lits = append(o.lits, fl)
			}
			return true
		})
	}
	return o
}

func stringLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(bl.Value)
	return s, err == nil
}

// optParams are the indexes of fd's parameters used as option names.
func optParams(fd *ast.FuncDecl) map[int]bool {
	idx := map[string]int{}
	i := 0
	for _, f := range fd.Type.Params.List {
		for _, n := range f.Names {
			idx[n.Name] = i
			i++
		}
		if len(f.Names) == 0 {
			i++
		}
	}
	out := map[int]bool{}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && optionGetters[sel.Sel.Name] && len(c.Args) == 1 {
				if id, ok := c.Args[0].(*ast.Ident); ok {
					if k, ok := idx[id.Name]; ok {
						out[k] = true
					}
				}
			}
		}
		return true
	})
	return out
}

// reads returns the option names read by the body of n (a FuncDecl or
// FuncLit), following calls to the package's own functions.
func (o *optReads) reads(n ast.Node) map[string]bool {
	if m, ok := o.memo[n]; ok {
		return m
	}
	out := map[string]bool{}
	o.memo[n] = out // cycles end here
	ast.Inspect(n, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.IndexExpr:
			if sel, ok := x.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Opts" {
				if s, ok := stringLit(x.Index); ok {
					out[s] = true
				}
			}
		case *ast.CallExpr:
			var callees []*ast.FuncDecl
			switch f := x.Fun.(type) {
			case *ast.SelectorExpr:
				if optionGetters[f.Sel.Name] && len(x.Args) == 1 {
					if s, ok := stringLit(x.Args[0]); ok {
						out[s] = true
					}
				}
				callees = o.methods[f.Sel.Name]
			case *ast.Ident:
				if fd := o.funcs[f.Name]; fd != nil {
					callees = []*ast.FuncDecl{fd}
				}
			}
			for _, fd := range callees {
				for k := range optParams(fd) {
					if k < len(x.Args) {
						if s, ok := stringLit(x.Args[k]); ok {
							out[s] = true
						}
					}
				}
				for s := range o.reads(fd) {
					out[s] = true
				}
			}
		case *ast.Ident:
			// A function passed as a value (Run: runAdd, or to a helper).
			if fd := o.funcs[x.Name]; fd != nil && (x.Obj == nil || x.Obj.Kind == ast.Fun) {
				for s := range o.reads(fd) {
					out[s] = true
				}
			}
		}
		return true
	})
	return out
}

// funcNode finds the declaration of a function value of the package.
func (o *optReads) funcNode(fn any) ast.Node {
	f := runtime.FuncForPC(reflect.ValueOf(fn).Pointer())
	if f == nil {
		return nil
	}
	name := f.Name()
	if i := strings.LastIndex(name, "."); i >= 0 && strings.HasPrefix(name, "cairn/commands.") {
		if fd := o.funcs[name[i+1:]]; fd != nil {
			return fd
		}
	}
	file, line := f.FileLine(f.Entry())
	var best *ast.FuncLit
	for _, fl := range o.lits {
		p, e := o.fset.Position(fl.Pos()), o.fset.Position(fl.End())
		if p.Filename == file && p.Line <= line && line <= e.Line {
			if best == nil || fl.Pos() > best.Pos() {
				best = fl
			}
		}
	}
	if best == nil {
		return nil
	}
	return best
}

// TestOptionsReadAreDeclared checks that every option name a command's
// functions read (Run, Text, TextDone, OutputFor, ContentType,
// ClientOutput, PreRun, and what they call) is declared by the command, an
// ancestor, or globally: a read of an undeclared name is always absent.
func TestOptionsReadAreDeclared(t *testing.T) {
	o := loadOptReads(t)
	checked, resolved := 0, 0
	for _, cmd := range commands.DefaultTable.Commands() {
		if cmd.Pending {
			continue
		}
		declared := map[string]bool{}
		for _, opt := range commands.DefaultTable.OptionsFor(cmd.Path) {
			for _, n := range opt.Names {
				declared[n] = true
			}
		}
		fns := []any{cmd.Run, cmd.Text, cmd.TextDone, cmd.OutputFor, cmd.ContentType, cmd.ClientOutput, cmd.PreRun}
		read := map[string]bool{}
		for _, fn := range fns {
			if reflect.ValueOf(fn).IsNil() {
				continue
			}
			checked++
			n := o.funcNode(fn)
			if n == nil {
				continue
			}
			resolved++
			for s := range o.reads(n) {
				read[s] = true
			}
		}
		var missing []string
		for s := range read {
			if !declared[s] && !strings.HasPrefix(s, "\x00") {
				missing = append(missing, s)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("%s reads undeclared option(s) %q", cmd.Path, missing)
		}
	}
	// The analysis must have found nearly every function it was given.
	if checked == 0 || resolved*10 < checked*9 {
		t.Fatalf("resolved %d of %d command functions", resolved, checked)
	}
}
