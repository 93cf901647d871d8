// ls.go: the "ls" command: directory listings in Kubo 0.42's shape.

package commands

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"cairn/node"
	"cairn/rpc"
)

var lsCommands = []*rpc.Command{{
	Path:     "ls",
	Synopsis: "List directory contents for Unix filesystem objects.",
	Help: `Displays the contents of an IPFS or IPNS object(s) at the given path, with
the following format:

  <cid> <size> <name>

With the --long (-l) option, display optional file mode (permissions) and
modification time in a format similar to Unix 'ls -l':

  <mode> <cid> <size> <mtime> <name>

Mode and mtime are optional UnixFS metadata. They are only present if the
content was imported with 'cairn add --preserve-mode' and '--preserve-mtime'.
Without preserved metadata, both mode and mtime display '-'.

The JSON output contains type information.`,
	Args: []rpc.Arg{{Name: "ipfs-path", Kind: rpc.ArgString, Required: true, Variadic: true, Stdin: true,
		Help: "The path to the IPFS object(s) to list links from."}},
	Options: []rpc.Option{
		{Names: []string{"headers", "v"}, Type: rpc.Bool, Help: "Print table headers (Hash, Size, Name)."},
		{Names: []string{"resolve-type"}, Type: rpc.Bool, Default: true, Help: "Resolve linked objects to find out their types."},
		{Names: []string{"size"}, Type: rpc.Bool, Default: true, Help: "Resolve linked objects to find out their file size."},
		{Names: []string{"stream", "s"}, Type: rpc.Bool, Help: "Enable experimental streaming of directory entries as they are traversed."},
		{Names: []string{"long", "l"}, Type: rpc.Bool, Help: "Use a long listing format, showing file mode and modification time."},
	},
	BodyArgs: true,
	// One value; with --stream one value per entry (Kubo then adds
	// X-Chunked-Output, which this table cannot yet vary per request).
	Output:    rpc.OutSingle,
	OutputFor: streamIf("stream"),
	Run:       runLs,
	Type:      func() any { return &LsOutput{} },
	Text:      lsText,
}}

// LsLink is one entry of ls.
type LsLink struct {
	Name, Hash string
	Size       uint64
	Type       int32 // UnixFS type: 1 directory, 2 file, 4 symlink, 0 unknown
	Target     string
	Mode       os.FileMode
	ModTime    time.Time
}

// LsObject is the listing of one argument (all of it, or one entry when
// streaming). Hash is the argument as given.
type LsObject struct {
	Hash  string
	Links []LsLink
}

// LsOutput is the body of ls.
type LsOutput struct {
	Objects []LsObject
}

func runLs(r *rpc.Request, e rpc.Emitter) error {
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	resolve := r.Bool("size") || r.Bool("resolve-type")
	stream := r.Bool("stream")
	var out []LsObject
	if !stream {
		out = make([]LsObject, len(r.Args))
	}
	for i, arg := range r.Args {
		res, err := r.Node.Dag().Resolve(r.Ctx, arg)
		if err != nil {
			return err
		}
		links := make([]LsLink, 0)
		err = r.Node.UnixFS().Ls(r.Ctx, res.Node, resolve, func(le node.LsEntry) error {
			l := LsLink{Name: le.Name, Hash: enc.Encode(le.Cid), Size: le.Size, Type: le.Type,
				Target: le.Target, Mode: le.Mode, ModTime: le.ModTime}
			if stream {
				return e.Emit(&LsOutput{Objects: []LsObject{{Hash: arg, Links: []LsLink{l}}}})
			}
			links = append(links, l)
			return nil
		})
		if err != nil {
			return err
		}
		if !stream {
			slices.SortFunc(links, func(a, b LsLink) int { return strings.Compare(a.Name, b.Name) })
			out[i] = LsObject{Hash: arg, Links: links}
		}
	}
	if stream {
		return nil
	}
	return e.Emit(&LsOutput{Objects: out})
}

// lsState carries the last listed object across streamed values, so that
// its heading is printed once.
type lsState struct{ lastHash string }

// lsText prints Kubo's tabular listing (tab-aligned within each value).
func lsText(t *rpc.TextEnv, v any) error {
	st, _ := t.State.(*lsState)
	if st == nil {
		st = &lsState{}
		t.State = st
	}
	req := t.Req
	headers, stream, size, long := req.Bool("headers"), req.Bool("stream"), req.Bool("size"), req.Bool("long")
	minWidth := 1
	if stream {
		minWidth = 10 // entries come one by one: a best guess at alignment
	}
	tw := tabwriter.NewWriter(t.Out, minWidth, 2, 1, ' ', 0)
	for _, obj := range v.(*LsOutput).Objects {
		if obj.Hash != st.lastHash {
			if len(req.Args) > 1 {
				if st.lastHash != "" {
					fmt.Fprintln(tw)
				}
				fmt.Fprintf(tw, "%s:\n", obj.Hash)
			}
			if headers {
				fmt.Fprintln(tw, lsHeader(long, size))
			}
			st.lastHash = obj.Hash
		}
		for _, l := range obj.Links {
			writeLsLink(tw, l, long, size)
		}
	}
	return tw.Flush()
}

func lsHeader(long, size bool) string {
	switch {
	case long && size:
		return "Mode\tHash\tSize\tModTime\tName"
	case long:
		return "Mode\tHash\tModTime\tName"
	case size:
		return "Hash\tSize\tName"
	}
	return "Hash\tName"
}

func writeLsLink(w io.Writer, l LsLink, long, size bool) {
	isDir := l.Type == node.LsDirectory || l.Type == 3 || l.Type == 5 // Metadata, HAMTShard
	name := EscNonPrint(l.Name)
	if isDir {
		name += "/"
	}
	var cols []string
	if long {
		mode := "-"
		if l.Mode != 0 {
			mode = formatMode(l.Mode)
		}
		cols = append(cols, mode)
	}
	cols = append(cols, l.Hash)
	if size {
		if isDir {
			cols = append(cols, "-")
		} else {
			cols = append(cols, fmt.Sprint(l.Size))
		}
	}
	if long {
		cols = append(cols, formatModTime(l.ModTime))
	}
	cols = append(cols, name)
	fmt.Fprintln(w, strings.Join(cols, "\t"))
}

// formatMode renders a mode as ls -l does: the type letter, then rwx
// triplets with setuid/setgid (s/S) and sticky (t/T) in the x places.
func formatMode(m os.FileMode) string {
	b := []byte("----------")
	switch {
	case m&os.ModeDir != 0:
		b[0] = 'd'
	case m&os.ModeSymlink != 0:
		b[0] = 'l'
	case m&os.ModeNamedPipe != 0:
		b[0] = 'p'
	case m&os.ModeSocket != 0:
		b[0] = 's'
	case m&os.ModeDevice != 0 && m&os.ModeCharDevice != 0:
		b[0] = 'c'
	case m&os.ModeDevice != 0:
		b[0] = 'b'
	}
	const rwx = "rwxrwxrwx"
	for i := 0; i < 9; i++ {
		if m&(1<<uint(8-i)) != 0 {
			b[i+1] = rwx[i]
		}
	}
	special := func(pos int, set bool, lower byte) {
		if !set {
			return
		}
		if b[pos] == 'x' {
			b[pos] = lower
		} else {
			b[pos] = lower - 'a' + 'A'
		}
	}
	special(3, m&os.ModeSetuid != 0, 's')
	special(6, m&os.ModeSetgid != 0, 's')
	special(9, m&os.ModeSticky != 0, 't')
	return string(b)
}

// formatModTime renders a time as ls does: "Jan 02 15:04" within the last
// six months (and not more than a day ahead), else "Jan 02  2006"; "-"
// when there is none.
func formatModTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	now := time.Now()
	if t.After(now.AddDate(0, -6, 0)) && t.Before(now.Add(24*time.Hour)) {
		return t.Format("Jan 02 15:04")
	}
	return t.Format("Jan 02  2006")
}
