package commands_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	"github.com/ipfs/go-cid"
)

// lsTree is a directory with a small file, a two-chunk file, a symlink
// and a subdirectory.
func lsTree() files.Node {
	return files.NewMapDirectory(map[string]files.Node{
		"a.txt":   files.NewBytesFile([]byte("hello")),
		"big.bin": files.NewBytesFile(blkPattern(300 * 1024)),
		"link":    files.NewLinkFile("a.txt", nil),
		"sub":     files.NewMapDirectory(map[string]files.Node{"c.txt": files.NewBytesFile([]byte("sub file"))}),
	})
}

func lsOne(t *testing.T, n *node.Node, args []string, opts map[string]string) *commands.LsOutput {
	t.Helper()
	res := blkCall(t, n, "ls", args, opts, nil)
	if len(res.Values) != 1 {
		t.Fatalf("ls %v: %d values, want 1", args, len(res.Values))
	}
	return res.Values[0].(*commands.LsOutput)
}

func lsKey(t *testing.T, n *node.Node, p string) string {
	t.Helper()
	return blkCall(t, n, "block/stat", []string{p}, nil, nil).Values[0].(*commands.BlockStat).Key
}

func TestLs_Directory_Entries(t *testing.T) {
	n := testutil.MustOpenNode(t)
	root := blkAdd(t, n, "d", lsTree(), nil)
	arg := "/ipfs/" + root
	out := lsOne(t, n, []string{arg}, nil)
	if len(out.Objects) != 1 || out.Objects[0].Hash != arg {
		t.Fatalf("objects %+v", out.Objects)
	}
	want := []commands.LsLink{
		{Name: "a.txt", Hash: lsKey(t, n, root+"/a.txt"), Size: 5, Type: 2},
		{Name: "big.bin", Hash: lsKey(t, n, root+"/big.bin"), Size: 300 * 1024, Type: 2},
		{Name: "link", Hash: lsKey(t, n, root+"/link"), Size: 5, Type: 4, Target: "a.txt"},
		{Name: "sub", Hash: lsKey(t, n, root+"/sub"), Size: 0, Type: 1},
	}
	if got := out.Objects[0].Links; !slices.Equal(got, want) {
		t.Errorf("links\n%+v\nwant\n%+v", got, want)
	}

	// Without resolving, dag-pb entries have no type or size.
	out = lsOne(t, n, []string{root}, map[string]string{"resolve-type": "false", "size": "false"})
	for _, l := range out.Objects[0].Links {
		if l.Type != 0 || l.Size != 0 || l.Target != "" {
			t.Errorf("unresolved %+v", l)
		}
	}
	// Either option alone still resolves.
	out = lsOne(t, n, []string{root}, map[string]string{"size": "false"})
	if l := out.Objects[0].Links[0]; l.Type != 2 || l.Size != 5 {
		t.Errorf("resolve-type only: %+v", l)
	}
}

func TestLs_RawLeaves_FileChunks(t *testing.T) {
	n := testutil.MustOpenNode(t)
	root := blkAdd(t, n, "r", files.NewMapDirectory(map[string]files.Node{
		"x":   files.NewBytesFile([]byte("hello")),
		"big": files.NewBytesFile(blkPattern(300 * 1024)),
	}), map[string]string{"cid-version": "1"})
	// Raw leaves are files whatever the options say; Size is the link's.
	out := lsOne(t, n, []string{root}, map[string]string{"resolve-type": "false", "size": "false"})
	x := out.Objects[0].Links[1]
	if x.Name != "x" || x.Type != 2 || x.Size != 5 || !strings.HasPrefix(x.Hash, "bafkrei") {
		t.Errorf("raw entry %+v", x)
	}
	// A multi-block file lists its chunks, unnamed.
	out = lsOne(t, n, []string{root + "/big"}, nil)
	links := out.Objects[0].Links
	if len(links) != 2 || links[0].Name != "" || links[0].Size != 262144 || links[1].Size != 300*1024-262144 || links[0].Type != 2 {
		t.Errorf("chunks %+v", links)
	}
	// A single block has no entries: an empty list, not null.
	res := blkCall(t, n, "ls", []string{root + "/x"}, nil, nil)
	b, _ := json.Marshal(res.Values[0])
	if want := `{"Objects":[{"Hash":"` + root + `/x","Links":[]}]}`; string(b) != want {
		t.Errorf("leaf: %s, want %s", b, want)
	}
}

func TestLs_MultipleArgs_And_Stream(t *testing.T) {
	n := testutil.MustOpenNode(t)
	root := blkAdd(t, n, "d", lsTree(), nil)
	out := lsOne(t, n, []string{root + "/sub", root}, nil)
	if len(out.Objects) != 2 || out.Objects[0].Hash != root+"/sub" || out.Objects[1].Hash != root ||
		len(out.Objects[0].Links) != 1 || len(out.Objects[1].Links) != 4 {
		t.Fatalf("objects %+v", out.Objects)
	}
	// Streaming: one value per entry, each naming its argument.
	res := blkCall(t, n, "ls", []string{root + "/sub", root}, map[string]string{"stream": "true"}, nil)
	var got []string
	for _, v := range res.Values {
		o := v.(*commands.LsOutput)
		if len(o.Objects) != 1 || len(o.Objects[0].Links) != 1 {
			t.Fatalf("stream value %+v", o)
		}
		got = append(got, o.Objects[0].Hash+" "+o.Objects[0].Links[0].Name)
	}
	want := []string{root + "/sub c.txt", root + " a.txt", root + " big.bin", root + " link", root + " sub"}
	if !slices.Equal(got, want) {
		t.Errorf("stream %q, want %q", got, want)
	}
}

func TestLs_HAMT_Directory(t *testing.T) {
	n := testutil.MustOpenNode(t)
	testutil.SetConfig(t, n, map[string]any{"Import.UnixFSHAMTDirectorySizeThreshold": "100B"})
	entries := map[string]files.Node{"zdir": files.NewMapDirectory(map[string]files.Node{"f": files.NewBytesFile([]byte("in"))})}
	var names []string
	for i := 0; i < 40; i++ {
		name := fmt.Sprintf("f%02d", i)
		entries[name] = files.NewBytesFile([]byte(name))
		names = append(names, name)
	}
	names = append(names, "zdir")
	root := blkAdd(t, n, "h", files.NewMapDirectory(entries), map[string]string{"max-hamt-fanout": "8"})
	rc, _ := cid.Decode(root)
	res, err := n.Dag().Resolve(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if fs, err := ft.ExtractFSNode(res.Node); err != nil || fs.Type() != ft.THAMTShard {
		t.Fatalf("%s is not a HAMT shard (%v)", rc, err)
	}
	out := lsOne(t, n, []string{root}, nil)
	var got []string
	for _, l := range out.Objects[0].Links {
		got = append(got, l.Name)
		wantType := int32(2)
		if l.Name == "zdir" {
			wantType = 1
		}
		if l.Type != wantType {
			t.Errorf("%s: type %d", l.Name, l.Type)
		}
	}
	if !slices.Equal(got, names) {
		t.Errorf("names %q, want %q", got, names)
	}
	// Streaming gives the same entries (in shard order).
	var streamed []string
	for _, v := range blkCall(t, n, "ls", []string{root}, map[string]string{"s": "true"}, nil).Values {
		streamed = append(streamed, v.(*commands.LsOutput).Objects[0].Links[0].Name)
	}
	slices.Sort(streamed)
	if !slices.Equal(streamed, names) {
		t.Errorf("streamed %q", streamed)
	}
}

func TestLs_ModeAndMtime(t *testing.T) {
	n := testutil.MustOpenNode(t)
	root := blkAdd(t, n, "d", lsTree(), map[string]string{"mode": "0640", "mtime": "1700000000"})
	out := lsOne(t, n, []string{root}, nil)
	mt := time.Unix(1700000000, 0)
	for _, l := range out.Objects[0].Links {
		want := os.FileMode(0640)
		if l.Name == "sub" {
			want |= os.ModeDir
		}
		if l.Name != "link" && l.Mode != want {
			t.Errorf("%s: mode %v, want %v", l.Name, l.Mode, want)
		}
		if !l.ModTime.Equal(mt) {
			t.Errorf("%s: mtime %v", l.Name, l.ModTime)
		}
	}
}

func TestLs_Errors(t *testing.T) {
	n := testutil.MustOpenNode(t)
	root := blkAdd(t, n, "d", lsTree(), nil)
	missing := "bafkreie7ohywtosou76tasm7j63yigtzxe7d5zqus4zu3j6oltvgtibeom"
	for _, tc := range []struct{ arg, want string }{
		{missing, notFound + missing},
		{"notacid", `invalid path "notacid": path does not have enough components`},
		{root + "/nope", `no link named "nope" under ` + root},
	} {
		if msg := blkCallErr(t, n, "ls", []string{tc.arg}, nil, nil); msg != tc.want {
			t.Errorf("%s: %q, want %q", tc.arg, msg, tc.want)
		}
	}
	// A missing entry block fails the listing only when entries are resolved.
	sub := lsKey(t, n, root+"/sub")
	sc, _ := cid.Decode(sub)
	if err := n.Blocks.DeleteBlock(context.Background(), sc); err != nil {
		t.Fatal(err)
	}
	if msg := blkCallErr(t, n, "ls", []string{root}, nil, nil); msg != notFound+sub {
		t.Errorf("missing entry: %q", msg)
	}
	out := lsOne(t, n, []string{root}, map[string]string{"resolve-type": "false", "size": "false"})
	if len(out.Objects[0].Links) != 4 {
		t.Errorf("unresolved listing %+v", out)
	}
}

// lsRender runs the ls text renderer over values with the given options.
func lsRender(t *testing.T, args []string, opts map[string]any, vals ...*commands.LsOutput) string {
	t.Helper()
	var out bytes.Buffer
	env := &rpc.TextEnv{Out: &out, Err: &out, Req: &rpc.Request{Args: args, Opts: opts}}
	for _, v := range vals {
		if err := commands.DefaultTable.Find("ls").Text(env, v); err != nil {
			t.Fatal(err)
		}
	}
	return out.String()
}

func TestLs_Text_Formats(t *testing.T) {
	links := []commands.LsLink{
		{Name: "a.txt", Hash: "QmAAA", Size: 5, Type: 2},
		{Name: "sub", Hash: "QmBB", Type: 1},
		{Name: "t\tab", Hash: "QmC", Size: 12, Type: 4, Target: "x"},
	}
	one := &commands.LsOutput{Objects: []commands.LsObject{{Hash: "X", Links: links}}}
	std := map[string]any{"size": true, "resolve-type": true}
	if got, want := lsRender(t, []string{"X"}, std, one),
		"QmAAA 5  a.txt\nQmBB  -  sub/\nQmC   12 t\\tab\n"; got != want {
		t.Errorf("standard:\n%q\nwant\n%q", got, want)
	}
	hdr := map[string]any{"size": true, "headers": true}
	if got, want := lsRender(t, []string{"X"}, hdr, one),
		"Hash  Size Name\nQmAAA 5    a.txt\nQmBB  -    sub/\nQmC   12   t\\tab\n"; got != want {
		t.Errorf("headers:\n%q\nwant\n%q", got, want)
	}
	if got, want := lsRender(t, []string{"X"}, map[string]any{"headers": true}, one),
		"Hash  Name\nQmAAA a.txt\nQmBB  sub/\nQmC   t\\tab\n"; got != want {
		t.Errorf("no size:\n%q\nwant\n%q", got, want)
	}
	// Two arguments: a heading per object and a blank line between.
	two := &commands.LsOutput{Objects: []commands.LsObject{{Hash: "X", Links: links[:1]}, {Hash: "Y", Links: links[1:2]}}}
	if got, want := lsRender(t, []string{"X", "Y"}, std, two),
		"X:\nQmAAA 5 a.txt\n\nY:\nQmBB - sub/\n"; got != want {
		t.Errorf("two args:\n%q\nwant\n%q", got, want)
	}
	// Streamed values of one object share one heading.
	s1 := &commands.LsOutput{Objects: []commands.LsObject{{Hash: "X", Links: links[:1]}}}
	s2 := &commands.LsOutput{Objects: []commands.LsObject{{Hash: "X", Links: links[1:2]}}}
	stream := map[string]any{"size": true, "stream": true, "headers": true}
	if got, want := lsRender(t, []string{"X"}, stream, s1, s2),
		"Hash      Size      Name\nQmAAA     5         a.txt\nQmBB      -         sub/\n"; got != want {
		t.Errorf("stream:\n%q\nwant\n%q", got, want)
	}
}

func TestLs_Text_Long(t *testing.T) {
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	recent := time.Now().Add(-time.Hour)
	links := []commands.LsLink{
		{Name: "f", Hash: "QmA", Size: 5, Type: 2, Mode: 0644, ModTime: old},
		{Name: "d", Hash: "QmB", Type: 1, Mode: 0755 | os.ModeDir, ModTime: recent},
		{Name: "n", Hash: "QmC", Size: 1, Type: 2},
		{Name: "s", Hash: "QmD", Size: 1, Type: 2, Mode: 0755 | os.ModeSetuid},
		{Name: "g", Hash: "QmE", Size: 1, Type: 2, Mode: 0644 | os.ModeSetuid | os.ModeSetgid},
		{Name: "k", Hash: "QmF", Type: 1, Mode: 0777 | os.ModeDir | os.ModeSticky},
		{Name: "l", Hash: "QmG", Size: 1, Type: 4, Mode: 0777 | os.ModeSymlink},
	}
	out := &commands.LsOutput{Objects: []commands.LsObject{{Hash: "X", Links: links}}}
	rt := recent.Format("Jan 02 15:04")
	got := lsRender(t, []string{"X"}, map[string]any{"size": true, "long": true, "headers": true}, out)
	want := "" +
		"Mode       Hash Size ModTime      Name\n" +
		"-rw-r--r-- QmA  5    Jan 02  2020 f\n" +
		"drwxr-xr-x QmB  -    " + rt + " d/\n" +
		"-          QmC  1    -            n\n" +
		"-rwsr-xr-x QmD  1    -            s\n" +
		"-rwSr-Sr-- QmE  1    -            g\n" +
		"drwxrwxrwt QmF  -    -            k/\n" +
		"lrwxrwxrwx QmG  1    -            l\n"
	if got != want {
		t.Errorf("long:\n%s\nwant\n%s", got, want)
	}
	got = lsRender(t, []string{"X"}, map[string]any{"long": true}, &commands.LsOutput{Objects: []commands.LsObject{{Hash: "X", Links: links[:2]}}})
	if want := "-rw-r--r-- QmA Jan 02  2020 f\ndrwxr-xr-x QmB " + rt + " d/\n"; got != want {
		t.Errorf("long without size:\n%q\nwant\n%q", got, want)
	}
}

func TestLs_HTTP_Shapes(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	root := blkAdd(t, n, "d", files.NewMapDirectory(map[string]files.Node{
		"a.txt": files.NewBytesFile([]byte("hello")),
		"sub":   files.NewMapDirectory(map[string]files.Node{"c": files.NewBytesFile([]byte("c"))}),
	}), nil)
	a, sub := lsKey(t, n, root+"/a.txt"), lsKey(t, n, root+"/sub")

	resp := blkPost(t, srv, "ls", url.Values{"arg": {root}}, nil)
	blkWantHeaders(t, resp, 200, "application/json", "", "")
	want := `{"Objects":[{"Hash":"` + root + `","Links":[` +
		`{"Name":"a.txt","Hash":"` + a + `","Size":5,"Type":2,"Target":"","Mode":0,"ModTime":"0001-01-01T00:00:00Z"},` +
		`{"Name":"sub","Hash":"` + sub + `","Size":0,"Type":1,"Target":"","Mode":0,"ModTime":"0001-01-01T00:00:00Z"}]}]}` + "\n"
	if body := blkReadAll(t, resp.Body); body != want {
		t.Errorf("body\n%s\nwant\n%s", body, want)
	}

	resp = blkPost(t, srv, "ls", url.Values{"arg": {root}, "stream": {"true"}}, nil)
	blkWantHeaders(t, resp, 200, "application/json", "1", "")
	body := blkReadAll(t, resp.Body)
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if resp.StatusCode != 200 || len(lines) != 2 || !strings.HasPrefix(lines[0], `{"Objects":[{"Hash":"`+root+`","Links":[{"Name":"a.txt"`) ||
		!strings.HasPrefix(lines[1], `{"Objects":[{"Hash":"`+root+`","Links":[{"Name":"sub"`) {
		t.Errorf("stream body %q", body)
	}

	resp = blkPost(t, srv, "ls", url.Values{"arg": {root}, "encoding": {"text"}, "v": {"true"}}, nil)
	blkWantHeaders(t, resp, 200, "text/plain", "", "")
	pad := strings.Repeat(" ", len(a)-len("Hash"))
	if body, want := blkReadAll(t, resp.Body), "Hash"+pad+" Size Name\n"+a+" 5    a.txt\n"+sub+" -    sub/\n"; body != want {
		t.Errorf("text body\n%q\nwant\n%q", body, want)
	}

	// Arguments in the body.
	dir := files.NewMapDirectory(map[string]files.Node{"": files.NewBytesFile([]byte(root + "/sub\n"))})
	resp = blkPost(t, srv, "ls", nil, dir)
	if body := blkReadAll(t, resp.Body); !strings.HasPrefix(body, `{"Objects":[{"Hash":"`+root+`/sub","Links":[{"Name":"c"`) {
		t.Errorf("body args %q", body)
	}

	resp = blkPost(t, srv, "ls", url.Values{"arg": {"notacid"}}, nil)
	blkWantHeaders(t, resp, 500, "application/json", "", "")
	if body := blkReadAll(t, resp.Body); !strings.Contains(body, `"Message":"invalid path \"notacid\": path does not have enough components"`) {
		t.Errorf("error body %q", body)
	}
}
