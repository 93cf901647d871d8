// refs.go: "refs" (the links below objects) and "refs local" (every
// stored block).

package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
	mh "github.com/multiformats/go-multihash"
)

var refsCommands = []*rpc.Command{
	{
		Path:     "refs",
		Synopsis: "List links (references) from an object.",
		Help: `Lists the hashes of all the links an IPFS or IPNS object(s) contains,
with the following format:

  <link base58 hash>

List all references recursively by using the flag '-r'.`,
		Args: []rpc.Arg{{Name: "ipfs-path", Kind: rpc.ArgString, Required: true, Variadic: true, Stdin: true,
			Help: "Path to the object(s) to list refs from."}},
		Options: []rpc.Option{
			{Names: []string{"format"}, Type: rpc.String, Default: "<dst>", Help: "Emit edges with given format. Available tokens: <src> <dst> <linkname>."},
			{Names: []string{"edges", "e"}, Type: rpc.Bool, Help: "Emit edge format: `<from> -> <to>`."},
			{Names: []string{"unique", "u"}, Type: rpc.Bool, Help: "Omit duplicate refs from output."},
			{Names: []string{"recursive", "r"}, Type: rpc.Bool, Help: "Recursively list links of child nodes."},
			{Names: []string{"max-depth"}, Type: rpc.Int, Default: -1, Help: "Only for recursive refs, limits fetch and listing to the given depth"},
		},
		BodyArgs: true,
		Output:   rpc.OutStream,
		Run:      runRefs,
		Type:     func() any { return &RefWrapper{} },
		Text:     refsText,
	},
	{
		Path:     "refs/local",
		Synopsis: "List all local references.",
		Help:     `Displays the hashes of all local objects. NOTE: This treats all local objects as "raw blocks" and returns CIDv1-Raw CIDs.`,
		Output:   rpc.OutStream,
		Run:      runRefsLocal,
		Type:     func() any { return &RefWrapper{} },
		Text:     refsText,
	},
}

// RefWrapper is one line of refs: a reference, or the error that ended
// the traversal of one root.
type RefWrapper struct {
	Ref string
	Err string
}

func refsText(t *rpc.TextEnv, v any) error {
	rw := v.(*RefWrapper)
	if rw.Err != "" {
		return errors.New(rw.Err)
	}
	_, err := fmt.Fprintln(t.Out, rw.Ref)
	return err
}

func runRefs(r *rpc.Request, e rpc.Emitter) error {
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	maxDepth := int(r.Int("max-depth"))
	if !r.Bool("recursive") {
		maxDepth = 1
	}
	format := r.String("format")
	if r.Bool("edges") {
		if format != "<dst>" {
			return errors.New("using format argument with edges is not allowed")
		}
		format = "<src> -> <dst>"
	}
	// Every path is resolved before anything is written.
	roots := make([]cid.Cid, len(r.Args))
	for i, a := range r.Args {
		if roots[i], err = resolveRoot(r.Ctx, r.Node, a); err != nil {
			return err
		}
	}
	w := &refWriter{n: r.Node, e: e, enc: enc, unique: r.Bool("unique"), maxDepth: maxDepth, format: format}
	for _, c := range roots {
		if err := w.writeRefs(r.Ctx, c); err != nil {
			if errors.Is(err, rpc.ErrClientGone) {
				return err
			}
			if err := e.Emit(&RefWrapper{Err: err.Error()}); err != nil {
				return err
			}
		}
	}
	return nil
}

// refWriter walks DAGs as Kubo's RefWriter does; its set of seen CIDs is
// shared by all roots of one request.
type refWriter struct {
	n        *node.Node
	e        rpc.Emitter
	enc      rpc.CidEncoder
	unique   bool
	maxDepth int
	format   string
	seen     map[string]int // CID bytes => shallowest depth seen
}

func (w *refWriter) writeRefs(ctx context.Context, root cid.Cid) error {
	links, err := w.n.UnixFS().Links(ctx, root)
	if err != nil {
		return err
	}
	return w.walk(ctx, root, links, 0)
}

// walk writes the edges from c (at depth) to its links, then recurses.
// A child is read before its edge is written, so every printed ref is
// present.
func (w *refWriter) walk(ctx context.Context, c cid.Cid, links []*ipld.Link, depth int) error {
	for _, l := range links {
		deeper, write := w.visit(l.Cid, depth+1)
		if !deeper && !write {
			continue
		}
		sub, err := w.n.UnixFS().Links(ctx, l.Cid)
		if err != nil {
			return err
		}
		if write {
			if err := w.edge(ctx, c, l.Cid, l.Name); err != nil {
				return err
			}
		}
		if deeper {
			if err := w.walk(ctx, l.Cid, sub, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// visit says whether to go below c (found at depth) and whether to print
// it; with --unique a CID is printed once and explored again only when
// found higher up under a depth limit.
func (w *refWriter) visit(c cid.Cid, depth int) (deeper, write bool) {
	atMax := w.maxDepth >= 0 && depth == w.maxDepth
	if w.maxDepth >= 0 && depth > w.maxDepth {
		return false, false
	}
	if !w.unique {
		return !atMax, true
	}
	if w.seen == nil {
		w.seen = map[string]int{}
	}
	key := string(c.Bytes())
	old, ok := w.seen[key]
	if ok && (w.maxDepth < 0 || old <= depth) {
		return false, false
	}
	w.seen[key] = depth
	return !atMax, !ok
}

func (w *refWriter) edge(ctx context.Context, from, to cid.Cid, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s := w.enc.Encode(to)
	if w.format != "" {
		s = strings.ReplaceAll(w.format, "<src>", w.enc.Encode(from))
		s = strings.ReplaceAll(s, "<dst>", w.enc.Encode(to))
		s = strings.ReplaceAll(s, "<linkname>", name)
	}
	return w.e.Emit(&RefWrapper{Ref: s})
}

func runRefsLocal(r *rpc.Request, e rpc.Emitter) error {
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	return r.Node.Blocks.ForEachKey(r.Ctx, func(h mh.Multihash) error {
		return e.Emit(&RefWrapper{Ref: enc.Encode(cid.NewCidV1(cid.Raw, h))})
	})
}
