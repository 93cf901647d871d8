// Command binsize prints where the bytes of a Go binary go: the sizes of
// its symbols (what go tool nm -size lists, read with debug/elf so that
// .bss, which takes no room in the file, is left out) summed by package
// and by module, biggest first, so that the figures in
// docs/performance.md can be reproduced.
//
// Stripped binaries (the release build uses -ldflags=-s -w) have no
// symbol table, so binsize builds its own copy of cmd/cairn the way
// scripts/cross.sh does, without -s -w, unless a binary is given:
//
//	go run ./scripts/binsize                      # linux/arm64, top 40
//	go run ./scripts/binsize -arch armv7 -n 60
//	go run ./scripts/binsize -by module           # modules only
//	go run ./scripts/binsize -bin ./some-binary   # an unstripped binary
//	go run ./scripts/binsize -tags cairn_omit_x   # a build with tags
//
// Each row has the package's code (.text), its data (.rodata, .data,
// .noptrdata) and "est", its estimated share of the stripped release
// binary: the function metadata (.gopclntab and go:func.*, about as big
// as the code again) is spread over the packages by code size.
package main

import (
	"debug/elf"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

func main() {
	bin := flag.String("bin", "", "an unstripped Go binary to measure (default: build cmd/cairn)")
	arch := flag.String("arch", "arm64", "target to build: arm64, armv7, armv6 or amd64")
	tags := flag.String("tags", "", "build tags for the build")
	by := flag.String("by", "both", "group by package, module or both")
	n := flag.Int("n", 40, "rows to print per table")
	flag.Parse()
	if err := run(*bin, *arch, *tags, *by, *n); err != nil {
		fmt.Fprintln(os.Stderr, "binsize:", err)
		os.Exit(1)
	}
}

func run(bin, arch, tags, by string, n int) error {
	if bin == "" {
		dir, err := os.MkdirTemp("", "binsize")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "cairn")
		if err := build(bin, arch, tags); err != nil {
			return err
		}
	}
	st, err := os.Stat(bin)
	if err != nil {
		return err
	}
	f, err := elf.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return fmt.Errorf("%s: %w (a stripped binary? use one built without -s -w)", bin, err)
	}
	var m sizes
	for _, s := range syms {
		if s.Size == 0 || int(s.Section) <= 0 || int(s.Section) >= len(f.Sections) {
			continue
		}
		sec := f.Sections[s.Section]
		if sec.Type == elf.SHT_NOBITS { // .bss, .noptrbss: no bytes in the file
			continue
		}
		if s.Name == "go:func.*" { // func metadata: with .gopclntab, the per-function overhead
			m.meta += int64(s.Size)
			continue
		}
		m.add(pkgOf(s.Name), int64(s.Size), sec.Flags&elf.SHF_EXECINSTR != 0)
	}
	if sec := f.Section(".gopclntab"); sec != nil {
		m.meta += int64(sec.Size)
	}
	m.report(bin, st.Size(), by, n)
	return nil
}

// sizes sums symbol bytes by package: code (.text) and data (.rodata,
// .data, .noptrdata...). meta is the per-function metadata (.gopclntab
// and go:func.*), which grows with the code; an estimate of a package's
// share of the stripped file spreads it over the packages by code size.
type sizes struct {
	code, data map[string]int64
	meta       int64
}

func (m *sizes) add(pkg string, n int64, code bool) {
	if m.code == nil {
		m.code, m.data = map[string]int64{}, map[string]int64{}
	}
	if code {
		m.code[pkg] += n
	} else {
		m.data[pkg] += n
	}
}

func (m *sizes) report(bin string, fileSize int64, by string, n int) {
	var code, data int64
	for _, v := range m.code {
		code += v
	}
	for _, v := range m.data {
		data += v
	}
	ratio := float64(m.meta) / float64(code)
	fmt.Printf("%s: %d bytes unstripped; code %d, data %d, pclntab+funcdata %d (%.2f per code byte)\n",
		bin, fileSize, code, data, m.meta, ratio)
	fmt.Println("est = code*(1+that ratio) + data: the package's share of the stripped release binary")
	group := func(key func(string) string) (map[string][3]int64, int64) {
		g := map[string][3]int64{}
		var total int64
		for _, src := range []struct {
			m map[string]int64
			i int
		}{{m.code, 0}, {m.data, 1}} {
			for k, v := range src.m {
				r := g[key(k)]
				r[src.i] += v
				g[key(k)] = r
			}
		}
		for k, r := range g {
			r[2] = int64(float64(r[0])*(1+ratio)) + r[1]
			g[k] = r
			total += r[2]
		}
		return g, total
	}
	if by == "package" || by == "both" {
		fmt.Println()
		g, total := group(func(p string) string { return p })
		table("package", g, total)(n)
	}
	if by == "module" || by == "both" {
		fmt.Println()
		g, total := group(moduleOf)
		table("module", g, total)(n)
	}
}

func goCmd() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// build compiles cmd/cairn as scripts/cross.sh does, keeping the symbols.
func build(out, arch, tags string) error {
	env := append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	switch arch {
	case "arm64", "amd64":
		env = append(env, "GOARCH="+arch)
	case "armv7":
		env = append(env, "GOARCH=arm", "GOARM=7")
	case "armv6":
		env = append(env, "GOARCH=arm", "GOARM=6")
	default:
		return fmt.Errorf("unknown -arch %q", arch)
	}
	args := []string{"build", "-trimpath", "-buildvcs=false", "-o", out}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command(goCmd(), append(args, "./cmd/cairn")...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// parseLine splits a line of go tool nm -size: address, size, type, name
// (the address is missing for undefined symbols).
func parseLine(s string) (size int64, typ, name string, ok bool) {
	f := strings.Fields(s)
	if len(f) < 4 {
		return 0, "", "", false
	}
	size, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, "", "", false
	}
	return size, f[2], strings.Join(f[3:], " "), true
}

// pkgOf names the package a symbol belongs to: the import path before the
// first dot after the last slash, with the linker's prefixes removed
// (type:, go:itab., go:info. ...). Runtime tables are grouped as "go:".
func pkgOf(sym string) string {
	s := sym
	for _, p := range []string{"type:.eq.", "type:.hash.", "type:.namedata.", "type:", "go:itab.", "go:info.", "go:cuinfo.", "go:string.", "gclocals·", "go:link."} {
		s = strings.TrimPrefix(s, p)
	}
	s = strings.TrimLeft(s, "*[]0123456789")
	if strings.HasPrefix(s, "map.") || strings.HasPrefix(s, "func(") || strings.HasPrefix(s, "struct") ||
		strings.HasPrefix(s, "noalg.") || strings.HasPrefix(s, "interface") || strings.HasPrefix(s, "chan ") {
		return "(types)"
	}
	if strings.HasPrefix(sym, "go:") || strings.HasPrefix(sym, "runtime.") && !strings.Contains(sym, "/") {
		if strings.HasPrefix(sym, "go:") && !strings.Contains(s, ".") {
			return "go:"
		}
	}
	head := s
	if i := strings.IndexByte(head, '['); i >= 0 { // generic instances name other packages
		head = head[:i]
	}
	slash := strings.LastIndex(head, "/")
	dot := strings.Index(head[slash+1:], ".")
	if dot < 0 {
		if strings.HasPrefix(sym, "go:") {
			return "go:"
		}
		return s
	}
	return s[:slash+1+dot]
}

// moduleOf guesses the module of a package: the standard library ("std")
// when the first element has no dot, else the repository root (three
// elements for github.com-style hosts, two for golang.org/x etc.), with a
// /vN major-version suffix kept.
func moduleOf(pkg string) string {
	if strings.HasPrefix(pkg, "(") || pkg == "go:" {
		return pkg
	}
	el := strings.Split(pkg, "/")
	if !strings.Contains(el[0], ".") {
		if el[0] == "cairn" {
			return "cairn"
		}
		return "std"
	}
	k := 3
	switch el[0] {
	case "golang.org", "gopkg.in", "go.uber.org", "go.etcd.io", "go.opentelemetry.io", "lukechampine.com", "filippo.io", "go.yaml.in", "gonum.org", "google.golang.org":
		k = 2
		if el[0] == "golang.org" || el[0] == "gonum.org" || el[0] == "go.yaml.in" {
			k = 3
		}
	}
	if k > len(el) {
		k = len(el)
	}
	if k < len(el) && isMajor(el[k]) {
		k++
	}
	return strings.Join(el[:k], "/")
}

func isMajor(s string) bool {
	if len(s) < 2 || s[0] != 'v' {
		return false
	}
	_, err := strconv.Atoi(s[1:])
	return err == nil
}

func table(what string, m map[string][3]int64, total int64) func(n int) {
	return func(n int) {
		type row struct {
			k string
			v [3]int64
		}
		rows := make([]row, 0, len(m))
		for k, v := range m {
			rows = append(rows, row{k, v})
		}
		sort.Slice(rows, func(i, j int) bool {
			if rows[i].v[2] != rows[j].v[2] {
				return rows[i].v[2] > rows[j].v[2]
			}
			return rows[i].k < rows[j].k
		})
		fmt.Printf("%10s %10s %10s %6s  %s (%d)\n", "est", "code", "data", "share", what, len(rows))
		var rest [3]int64
		for i, r := range rows {
			if n > 0 && i >= n {
				for j := range rest {
					rest[j] += r.v[j]
				}
				continue
			}
			fmt.Printf("%10d %10d %10d %5.1f%%  %s\n", r.v[2], r.v[0], r.v[1], 100*float64(r.v[2])/float64(total), r.k)
		}
		if rest[2] > 0 {
			fmt.Printf("%10d %10d %10d %5.1f%%  (%d more)\n", rest[2], rest[0], rest[1], 100*float64(rest[2])/float64(total), len(rows)-n)
		}
		fmt.Printf("%10d %10s %10s %6s  total\n", total, "", "", "")
	}
}
