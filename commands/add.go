// add.go: the "add" command.

package commands

import (
	"errors"
	"fmt"
	"os"
	"time"

	"cairn/node"
	"cairn/rpc"
)

var addCommands = []*rpc.Command{{
	Path:     "add",
	Synopsis: "Add a file or directory to IPFS.",
	Help: `Adds the content of <path> to IPFS. Use -r to add directories.
Note that directories are added recursively, to form the IPFS
MerkleDAG.

The CID printed is the same Kubo prints for the same input and options.`,
	Args: []rpc.Arg{{Name: "path", Kind: rpc.ArgFile, Required: true, Variadic: true, Stdin: true, Recursive: true,
		Help: "The path to a file to be added to IPFS."}},
	Options: []rpc.Option{
		{Names: []string{"recursive", "r"}, Type: rpc.Bool, Help: "Add directory paths recursively."},
		{Names: []string{"dereference-args"}, Type: rpc.Bool, Help: "Symlinks supplied in arguments are dereferenced."},
		{Names: []string{"stdin-name"}, Type: rpc.String, Help: "Assign a name if the file source is stdin."},
		{Names: []string{"hidden", "H"}, Type: rpc.Bool, Help: "Include files that are hidden. Only takes effect on recursive add."},
		{Names: []string{"ignore"}, Type: rpc.StringList, Help: "A rule (.gitignore-stype) defining which file(s) should be ignored."},
		{Names: []string{"ignore-rules-path"}, Type: rpc.String, Help: "A path to a file with .gitignore-style ignore rules."},
		{Names: []string{"empty-dirs", "E"}, Type: rpc.Bool, Default: true, Help: "Include empty directories in the import."},
		{Names: []string{"dereference-symlinks"}, Type: rpc.Bool, Help: "Symlinks in arguments and inside directories are dereferenced."},
		{Names: []string{"quiet", "q"}, Type: rpc.Bool, Help: "Write minimal output."},
		{Names: []string{"quieter", "Q"}, Type: rpc.Bool, Help: "Write only final hash."},
		{Names: []string{"silent"}, Type: rpc.Bool, Help: "Write no output."},
		{Names: []string{"progress", "p"}, Type: rpc.Bool, Help: "Stream progress data."},
		{Names: []string{"only-hash", "n"}, Type: rpc.Bool, Help: "Only chunk and hash - do not write to disk."},
		{Names: []string{"wrap-with-directory", "w"}, Type: rpc.Bool, Help: "Wrap files with a directory object."},
		{Names: []string{"pin"}, Type: rpc.Bool, Default: true, Help: "Pin locally to protect added files from garbage collection."},
		{Names: []string{"pin-name"}, Type: rpc.String, Help: "Name to use for the pin. Requires explicit value (e.g., --pin-name=myname)."},
		{Names: []string{"to-files"}, Type: rpc.String, Help: "Add reference to Files API (MFS) at the provided path."},
		{Names: []string{"cid-version"}, Type: rpc.Int, Help: "CID version (0 or 1). CIDv1 automatically enables raw-leaves and is required for non-sha2-256 hashes."},
		{Names: []string{"hash"}, Type: rpc.String, Help: "Hash function to use. Implies CIDv1 if not sha2-256."},
		{Names: []string{"raw-leaves"}, Type: rpc.Bool, Help: "Use raw blocks for leaf nodes."},
		{Names: []string{"chunker", "s"}, Type: rpc.String, Help: "Chunking algorithm, size-[bytes], rabin-[min]-[avg]-[max] or buzhash."},
		{Names: []string{"trickle", "t"}, Type: rpc.Bool, Help: "Use trickle-dag format for dag generation."},
		{Names: []string{"max-file-links"}, Type: rpc.Int, Help: "Limit the maximum number of links in UnixFS file nodes."},
		{Names: []string{"max-directory-links"}, Type: rpc.Int, Help: "Limit the maximum number of links in UnixFS basic directory nodes."},
		{Names: []string{"max-hamt-fanout"}, Type: rpc.Int, Help: "Limit the maximum number of links of a UnixFS HAMT directory node."},
		{Names: []string{"inline"}, Type: rpc.Bool, Help: "Inline small blocks into CIDs."},
		{Names: []string{"inline-limit"}, Type: rpc.Int, Default: 32, Help: "Maximum block size to inline. Maximum: 128 bytes."},
		{Names: []string{"nocopy"}, Type: rpc.Bool, Help: "Add the file using filestore. Implies raw-leaves. (experimental)"},
		{Names: []string{"fscache"}, Type: rpc.Bool, Help: "Check the filestore for pre-existing blocks. (experimental)"},
		{Names: []string{"preserve-mode"}, Type: rpc.Bool, Help: "Apply existing POSIX permissions to created UnixFS entries."},
		{Names: []string{"preserve-mtime"}, Type: rpc.Bool, Help: "Apply existing POSIX modification time to created UnixFS entries."},
		{Names: []string{"mode"}, Type: rpc.Uint, Help: "Custom POSIX file mode to store in created UnixFS entries."},
		{Names: []string{"mtime"}, Type: rpc.Int64, Help: "Custom POSIX modification time to store in created UnixFS entries (seconds before or after the Unix Epoch)."},
		{Names: []string{"mtime-nsecs"}, Type: rpc.Uint, Help: "Custom POSIX modification time (optional time fraction in nanoseconds)."},
		{Names: []string{"fast-provide-root"}, Type: rpc.Bool, Help: "Announce the root CID right away. Accepted for Kubo compatibility and ignored: cairn announces pinned roots from its own rate-limited queue."},
		{Names: []string{"fast-provide-dag"}, Type: rpc.Bool, Help: "Announce every block of the DAG right away. Accepted for Kubo compatibility and ignored: cairn announces pinned roots from its own rate-limited queue."},
		{Names: []string{"fast-provide-wait"}, Type: rpc.Bool, Help: "Wait for the announcements to finish. Accepted for Kubo compatibility and ignored: cairn announces pinned roots from its own rate-limited queue."},
	},
	Output:   rpc.OutStream,
	Run:      runAdd,
	Type:     func() any { return &node.AddEvent{} },
	Text:     addText,
	TextDone: addTextDone,
	PreRun:   addPreRun,
}}

// addPreRun turns progress on when stderr is a terminal and no quiet
// option was given (Kubo's add PreRun).
func addPreRun(opts map[string]string, t *rpc.TextEnv) {
	if _, set := opts["progress"]; !set && t.TTY &&
		opts["quiet"] == "" && opts["quieter"] == "" && opts["silent"] == "" {
		opts["progress"] = "true"
	}
}

// addOptions turns request options into node.AddOptions.
func addOptions(r *rpc.Request) (node.AddOptions, error) {
	trickle := r.Bool("trickle")
	if l := r.Node.Config().Import.UnixFSDAGLayout; !r.IsSet("trickle") && l.WithDefault("") == "trickle" {
		trickle = true // Kubo's add: the config's layout unless --trickle is given
	}
	o := node.AddOptions{
		Chunker:       r.String("chunker"),
		Trickle:       trickle,
		Hash:          r.String("hash"),
		Inline:        r.Bool("inline"),
		InlineLimit:   int(r.Int("inline-limit")),
		OnlyHash:      r.Bool("only-hash"),
		Pin:           r.Bool("pin") && !r.Bool("only-hash"),
		Wrap:          r.Bool("wrap-with-directory"),
		Silent:        r.Bool("silent"),
		Progress:      r.Bool("progress"),
		PreserveMode:  r.Bool("preserve-mode"),
		PreserveMtime: r.Bool("preserve-mtime"),
		EmptyDirs:     r.Bool("empty-dirs"),
		MaxLinks:      int(r.Int("max-file-links")),
		MaxDirLinks:   int(r.Int("max-directory-links")),
		MaxHAMTFanout: int(r.Int("max-hamt-fanout")),
		NoCopy:        r.Bool("nocopy"),
		PinName:       r.String("pin-name"),
		Fscache:       r.Bool("fscache"),
	}
	if r.IsSet("raw-leaves") {
		v := r.Bool("raw-leaves")
		o.RawLeaves = &v
	}
	if r.IsSet("cid-version") {
		v := int(r.Int("cid-version"))
		o.CidVersion = &v
	}
	if m := r.Int("mode"); m != 0 {
		o.Mode = os.FileMode(m)
	}
	if r.IsSet("mtime-nsecs") && !r.IsSet("mtime") {
		return o, errors.New(`option "mtime-nsecs" requires "mtime" to be provided as well`)
	}
	if r.IsSet("mtime") {
		ns := r.Int("mtime-nsecs")
		if ns > 999999999 {
			return o, errors.New("mtime nanoseconds must be in range [1, 999999999]")
		}
		o.Mtime = time.Unix(r.Int("mtime"), ns)
	}
	if r.Bool("only-hash") && r.IsSet("to-files") {
		return o, errors.New("only-hash and to-files options are not compatible")
	}
	if r.IsSet("pin-name") && !r.Bool("pin") {
		return o, errors.New("pin-name option requires pin to be set")
	}
	if len(r.String("pin-name")) > 255 {
		return o, fmt.Errorf("pin name is %d bytes (max 255 bytes)", len(r.String("pin-name")))
	}
	if r.Bool("wrap-with-directory") && r.IsSet("to-files") {
		return o, errors.New("wrap-with-directory and to-files options are not compatible")
	}
	if r.IsSet("to-files") {
		o.AfterTop = toFiles(r, r.String("to-files"))
	}
	return o, nil
}

func runAdd(r *rpc.Request, e rpc.Emitter) error {
	o, err := addOptions(r)
	if err != nil {
		return err
	}
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	o.Encode = enc.Encode
	a, err := r.Node.UnixFS().NewAdder(r.Ctx, o, func(ev node.AddEvent) error { return e.Emit(&ev) })
	if err != nil {
		return err
	}
	if r.Files == nil {
		return errors.New("expected a file argument")
	}
	_, err = a.AddAll(r.Files)
	return err
}

// addState is the CLI renderer's memory across events.
type addState struct {
	last string
	bar  *progressBar
}

func addText(t *rpc.TextEnv, v any) error {
	ev := v.(*node.AddEvent)
	st, _ := t.State.(*addState)
	if st == nil {
		st = &addState{}
		if t.Req != nil && t.Req.Bool("progress") && t.TTY {
			st.bar = newProgressBar(t.Err, totalSize(t))
		}
		t.State = st
	}
	if ev.Hash == "" {
		if st.bar != nil {
			st.bar.update(ev.Name, ev.Bytes)
		}
		return nil
	}
	if st.bar != nil {
		st.bar.clear()
	}
	q := t.Req != nil && t.Req.Bool("quiet")
	qq := t.Req != nil && t.Req.Bool("quieter")
	switch {
	case qq:
		st.last = ev.Hash
	case q:
		fmt.Fprintf(t.Out, "%s\n", ev.Hash)
	default:
		fmt.Fprintf(t.Out, "added %s %s\n", ev.Hash, EscNonPrint(ev.Name))
	}
	if st.bar != nil {
		st.bar.done(ev.Name)
	}
	return nil
}

func addTextDone(t *rpc.TextEnv) error {
	st, _ := t.State.(*addState)
	if st == nil {
		return nil
	}
	if st.bar != nil {
		st.bar.finish()
	}
	if t.Req != nil && t.Req.Bool("quieter") && st.last != "" {
		fmt.Fprintf(t.Out, "%s\n", st.last)
	}
	return nil
}

// totalSize is the byte count of the files being added, which the CLI
// stores in the request before it runs (0: unknown).
func totalSize(t *rpc.TextEnv) int64 {
	if t.Req == nil {
		return 0
	}
	v, _ := t.Req.Opts[OptTotalSize].(int64)
	return v
}

// OptTotalSize is a CLI-only option key (never sent) holding the input size.
const OptTotalSize = "\x00total-size"
