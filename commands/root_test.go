package commands_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
)

// FuzzDecodeArgs feeds arbitrary query strings to option decoding and
// argument binding for every command: they must return a value or a
// ParseError, never panic.
func FuzzDecodeArgs(f *testing.F) {
	f.Add("add", "arg=a&pin=TRUE&chunker=size-10&cid-version=0x1")
	f.Add("cat", "offset=010&length=1_000&arg=/ipfs/x")
	f.Add("cid/format", "f=%25P&v=0&b=base32&arg=Qm")
	f.Add("version", "number=&all=maybe")
	f.Add("add", "pin=true&pin=false&mode=0644&mtime=-1")
	cmds := commands.DefaultTable.Commands()
	f.Fuzz(func(t *testing.T, path, query string) {
		cmd := commands.DefaultTable.Find(path)
		if cmd == nil {
			cmd = cmds[len(path)%len(cmds)]
		}
		vals, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		var pairs []rpc.KV
		var args []string
		for k, vs := range vals {
			for _, v := range vs {
				pairs = append(pairs, rpc.KV{Key: k, Value: v})
				if k == "arg" {
					args = append(args, v)
				}
			}
		}
		opts, err := rpc.DecodeOptions(commands.DefaultTable.OptionsFor(cmd.Path), pairs)
		if err != nil {
			if _, ok := err.(*rpc.ParseError); !ok {
				t.Fatalf("non-parse error %T: %v", err, err)
			}
			return
		}
		for _, o := range commands.DefaultTable.OptionsFor(cmd.Path) {
			if o.Default != nil {
				if _, ok := opts[o.Name()]; !ok {
					t.Fatalf("default of %s missing", o.Name())
				}
			}
		}
		lines := rpc.SplitBodyLines([]byte(query))
		if _, err := rpc.BindArgs(cmd, args, lines, len(query)%2 == 0); err != nil {
			if _, ok := err.(*rpc.ParseError); !ok {
				t.Fatalf("non-parse error %T: %v", err, err)
			}
		}
	})
}

// Ensure a multipart request with no body answers Kubo's "multipart:
// NextPart: EOF" for every command taking files, never a recovered panic.
func TestMultipart_NoBody(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	for _, path := range []string{"add", "block/put", "dag/put", "dag/import", "tar/add", "config/replace", "object/put"} {
		for _, length := range []string{"", "Content-Length: 0\r\n"} {
			c, err := net.Dial("tcp", srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(c, "POST /api/v0/"+path+" HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n"+length+"\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			c.Close()
			msg := string(body) + resp.Trailer.Get("X-Stream-Error")
			if resp.StatusCode != 500 || !strings.Contains(msg, `"multipart: NextPart: EOF"`) {
				t.Errorf("%s with no body (%q): %d %q", path, length, resp.StatusCode, msg)
			}
		}
	}
}

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

// wireCase is one golden file of testdata/wire: a raw request, a line of
// dashes, then the expected status, headers (a subset, exact values) and
// body. A body line may use * as a wildcard; a body of "*" alone matches
// anything. "Trailer-X-Stream-Error: msg" checks the trailer.
type wireCase struct {
	method, target string
	reqHeaders     http.Header
	reqBody        string
	status         int
	headers        http.Header
	body           string
}

func parseWireCase(t *testing.T, path string) wireCase {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	req, resp, ok := strings.Cut(string(raw), "\n----------\n")
	if !ok {
		t.Fatalf("%s: no separator", path)
	}
	var wc wireCase
	head, body, _ := strings.Cut(req, "\n")
	parts := strings.Fields(head)
	wc.method, wc.target = parts[0], parts[1]
	wc.reqHeaders = http.Header{}
	hdrs, reqBody, _ := strings.Cut(body, "\n\n")
	for _, l := range strings.Split(hdrs, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			wc.reqHeaders.Add(k, v)
		}
	}
	wc.reqBody = strings.ReplaceAll(reqBody, "\n", "\r\n")
	lines := strings.Split(resp, "\n")
	fmt.Sscanf(lines[0], "%d", &wc.status)
	wc.headers = http.Header{}
	i := 1
	for ; i < len(lines) && lines[i] != ""; i++ {
		if k, v, ok := strings.Cut(lines[i], ": "); ok {
			wc.headers.Add(k, v)
		}
	}
	// The body is everything after the blank line, less the file's
	// final newline.
	if i+1 <= len(lines) {
		wc.body = strings.TrimSuffix(strings.Join(lines[i+1:], "\n"), "\n")
	}
	return wc
}

func rawDo(t *testing.T, addr string, wc wireCase) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", wc.method, wc.target, addr)
	for k, vs := range wc.reqHeaders {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	if wc.reqHeaders.Get("User-Agent") == "" {
		b.WriteString("User-Agent: go-ipfs-cmds/http\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\nConnection: close\r\n\r\n%s", len(wc.reqBody), wc.reqBody)
	if _, err := c.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(wc.method, "http://"+addr+wc.target, nil)
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, body
}

func bodyMatches(want, got string) bool {
	if strings.TrimSpace(want) == "*" {
		return true
	}
	if !strings.Contains(want, "*") {
		return want == got
	}
	pat := "^" + strings.ReplaceAll(regexp.QuoteMeta(want), `\*`, ".*") + "$"
	return regexp.MustCompile("(?s)" + pat).MatchString(got)
}

// seedHello adds "hello world\n" (QmT78zSu...) to n.
func seedHello(t *testing.T, srv *testutil.Server) {
	t.Helper()
	dir := files.NewMapDirectory(map[string]files.Node{"hello": files.NewBytesFile([]byte("hello world\n"))})
	if _, err := rpc.Call(context.Background(), srv.Node, commands.DefaultTable, "add", nil, nil, dir); err != nil {
		t.Fatal(err)
	}
}

// Ensure every golden request of testdata/wire gets the recorded answer.
func TestWire_Golden(t *testing.T) {
	srv := testutil.StartServer(t, testutil.MustOpenNode(t))
	seedHello(t, srv)
	paths, err := filepath.Glob("testdata/wire/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txt"), func(t *testing.T) {
			wc := parseWireCase(t, p)
			resp, body := rawDo(t, srv.Addr, wc)
			if resp.StatusCode != wc.status {
				t.Fatalf("status: got %d, want %d (body %q)", resp.StatusCode, wc.status, body)
			}
			for k, vs := range wc.headers {
				if k == "Trailer-X-Stream-Error" {
					if got := resp.Trailer.Get("X-Stream-Error"); got != vs[0] {
						t.Errorf("trailer X-Stream-Error: got %q, want %q", got, vs[0])
					}
					continue
				}
				if k == "Trailer" {
					if _, ok := resp.Trailer[http.CanonicalHeaderKey(vs[0])]; !ok {
						t.Errorf("trailer %s not declared", vs[0])
					}
					continue
				}
				if got := resp.Header.Values(k); strings.Join(got, ",") != strings.Join(vs, ",") {
					t.Errorf("header %s: got %q, want %q", k, got, vs)
				}
			}
			if !bodyMatches(wc.body, string(body)) {
				t.Errorf("body:\ngot  %q\nwant %q", body, wc.body)
			}
		})
	}
}
