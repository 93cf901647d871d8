// files.go: the "files" commands (the mutable file system, MFS) and add's
// --to-files, as Kubo 0.42 has them.
//
// Every command takes Kubo's inherited files option flush/f (default
// true): declared here on each command, since the table has no "files"
// parent command to carry it.

package commands

import (
	"errors"
	"fmt"
	"io"
	"os"
	gopath "path"
	"sort"
	"strconv"
	"strings"
	"time"

	"cairn/node"
	"cairn/rpc"

	humanize "github.com/dustin/go-humanize"
	dag "github.com/ipfs/boxo/ipld/merkledag"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	"github.com/ipfs/boxo/mfs"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
	mh "github.com/multiformats/go-multihash"
)

var (
	filesFlushOption = rpc.Option{Names: []string{"flush", "f"}, Type: rpc.Bool, Default: true,
		Help: "Flush target and ancestors after write."}
	filesCidVersionOption = rpc.Option{Names: []string{"cid-version", "cid-ver"}, Type: rpc.Int,
		Help: "Cid version to use. (experimental)"}
	filesHashOption = rpc.Option{Names: []string{"hash"}, Type: rpc.String,
		Help: "Hash function to use. Will set Cid version to 1 if used. (experimental)"}
)

const defaultStatFormat = `<hash>
Size: <size>
CumulativeSize: <cumulsize>
ChildBlocks: <childs>
Type: <type>
Mode: <mode> (<mode-octal>)
Mtime: <mtime>`

var filesCommands = []*rpc.Command{
	{
		Path:     "files/chroot",
		Synopsis: "Change the MFS root CID.",
		Help: `'cairn files chroot' changes the root CID used by MFS (Mutable File System).
This is a recovery command for when MFS becomes corrupted and prevents the
files commands from working.

When run without a CID argument, resets MFS to an empty directory.

WARNING: The old MFS root and its unpinned children will be removed during
the next garbage collection. Pin the old root first if you want to preserve.

This command can only run when the daemon is not running.

Examples:

  # Reset MFS to empty directory (recovery from corruption)
  $ cairn files chroot --confirm

  # Restore MFS to a known good directory CID
  $ cairn files chroot --confirm QmYourBackupCID`,
		Args:     []rpc.Arg{{Name: "cid", Kind: rpc.ArgString, Help: "New root CID (defaults to empty directory if not specified)."}},
		Options:  []rpc.Option{{Names: []string{"confirm"}, Type: rpc.Bool, Help: "Confirm this potentially destructive operation."}},
		NoRemote: true,
		Output:   rpc.OutSingle,
		Run:      runFilesChroot,
		Type:     func() any { return &MessageOutput{} },
		Text: func(t *rpc.TextEnv, v any) error {
			_, err := io.WriteString(t.Out, v.(*MessageOutput).Message)
			return err
		},
	},
	{
		Path:     "files/chcid",
		Synopsis: "Change the CID version or hash function of the root node of a given path.",
		Help: `Change the CID version or hash function of the root node of a given path.

The MFS root ('/') CID format follows Import.CidVersion and
Import.HashFunction in the config; this command only works on
subdirectories of the MFS root.`,
		Args:    []rpc.Arg{{Name: "path", Kind: rpc.ArgString, Help: "Path to change (must not be '/'). Default: '/'."}},
		Options: []rpc.Option{filesFlushOption, filesCidVersionOption, filesHashOption},
		Output:  rpc.OutNone,
		Run:     runFilesChcid,
	},
	{
		Path:     "files/chmod",
		Synopsis: "Change optional POSIX mode permissions",
		Help: `The mode argument must be specified in Unix numeric notation.

    $ cairn files chmod 0644 /foo
    $ cairn files stat /foo
    ...
    Type: file
    Mode: -rw-r--r-- (0644)
    ...`,
		Args: []rpc.Arg{
			{Name: "mode", Kind: rpc.ArgString, Required: true, Help: "Mode to apply to node (numeric notation)"},
			{Name: "path", Kind: rpc.ArgString, Required: true, Help: "Path to apply mode"},
		},
		Options: []rpc.Option{filesFlushOption}, // Kubo's inherited option; chmod always flushes
		Output:  rpc.OutNone,
		Run:     runFilesChmod,
	},
	{
		Path:     "files/cp",
		Synopsis: "Add references to IPFS files and directories in MFS (or copy within MFS).",
		Help: `"files cp" adds a reference to any IPFS file or directory (/ipfs/<cid>...)
into MFS, or copies within MFS. Only the root node is copied (lazy copy);
when an IPFS path matches an MFS path, the IPFS path wins.`,
		Args: []rpc.Arg{
			{Name: "source", Kind: rpc.ArgString, Required: true, Help: "Source IPFS or MFS path to copy."},
			{Name: "dest", Kind: rpc.ArgString, Required: true, Help: "Destination within MFS."},
		},
		Options: []rpc.Option{
			filesFlushOption,
			{Names: []string{"force"}, Type: rpc.Bool, Help: "Force overwrite of existing files."},
			{Names: []string{"parents", "p"}, Type: rpc.Bool, Help: "Make parent directories as needed."},
		},
		Output: rpc.OutNone,
		Run:    runFilesCp,
	},
	{
		Path:     "files/flush",
		Synopsis: "Flush a given path's data to disk.",
		Help:     "Flush a given path to the disk. This is only useful when other commands are run with '--flush=false'.",
		Args:     []rpc.Arg{{Name: "path", Kind: rpc.ArgString, Help: "Path to flush. Default: '/'."}},
		Options:  []rpc.Option{filesFlushOption},
		Output:   rpc.OutSingle,
		Run:      runFilesFlush,
		Type:     func() any { return &FilesFlushOutput{} },
		Text:     func(t *rpc.TextEnv, v any) error { return nil },
	},
	{
		Path:     "files/ls",
		Synopsis: "List directories in the local mutable namespace.",
		Help:     "List directories in the local mutable namespace.",
		Args:     []rpc.Arg{{Name: "path", Kind: rpc.ArgString, Help: "Path to show listing for. Defaults to '/'."}},
		Options: []rpc.Option{
			filesFlushOption,
			{Names: []string{"long", "l"}, Type: rpc.Bool, Help: "Use long listing format."},
			{Names: []string{"U"}, Type: rpc.Bool, Help: "Do not sort; list entries in directory order."},
		},
		Output: rpc.OutSingle,
		Run:    runFilesLs,
		Type:   func() any { return &FilesLsOutput{} },
		Text:   filesLsText,
	},
	{
		Path:     "files/mkdir",
		Synopsis: "Make directories.",
		Help: `Create the directory if it does not already exist.

The directory will have the same CID version and hash function of the
parent directory unless the --cid-version and --hash options are used.

NOTE: All paths must be absolute.`,
		Args: []rpc.Arg{{Name: "path", Kind: rpc.ArgString, Required: true, Help: "Path to dir to make."}},
		Options: []rpc.Option{
			filesFlushOption,
			{Names: []string{"parents", "p"}, Type: rpc.Bool, Help: "No error if existing, make parent directories as needed."},
			filesCidVersionOption, filesHashOption,
		},
		Output: rpc.OutNone,
		Run:    runFilesMkdir,
	},
	{
		Path:     "files/mv",
		Synopsis: "Move files.",
		Help:     "Move files around. Just like the traditional Unix mv.",
		Args: []rpc.Arg{
			{Name: "source", Kind: rpc.ArgString, Required: true, Help: "Source file to move."},
			{Name: "dest", Kind: rpc.ArgString, Required: true, Help: "Destination path for file to be moved to."},
		},
		Options: []rpc.Option{filesFlushOption},
		Output:  rpc.OutNone,
		Run:     runFilesMv,
	},
	{
		Path:     "files/read",
		Synopsis: "Read a file from MFS.",
		Help: `Read a specified number of bytes from a file at a given offset. By default,
it will read the entire file similar to the Unix cat.`,
		Args: []rpc.Arg{{Name: "path", Kind: rpc.ArgString, Required: true, Help: "Path to file to be read."}},
		Options: []rpc.Option{
			filesFlushOption,
			{Names: []string{"offset", "o"}, Type: rpc.Int64, Help: "Byte offset to begin reading from."},
			{Names: []string{"count", "n"}, Type: rpc.Int64, Help: "Maximum number of bytes to read."},
		},
		Output: rpc.OutBytes,
		Run:    runFilesRead,
	},
	{
		Path:     "files/rm",
		Synopsis: "Remove a file from MFS.",
		Help:     "Remove files or directories.",
		Args:     []rpc.Arg{{Name: "path", Kind: rpc.ArgString, Required: true, Variadic: true, Help: "File to remove."}},
		Options: []rpc.Option{
			filesFlushOption,
			{Names: []string{"recursive", "r"}, Type: rpc.Bool, Help: "Recursively remove directories."},
			{Names: []string{"force"}, Type: rpc.Bool, Help: "Forcibly remove target at path; implies -r for directories"},
		},
		// Kubo: one JSON string per path that failed, then the error.
		Output: rpc.OutStream,
		Run:    runFilesRm,
		Type:   func() any { return new(string) },
		Text: func(t *rpc.TextEnv, v any) error {
			_, err := fmt.Fprintln(t.Out, *v.(*string))
			return err
		},
	},
	{
		Path:     "files/stat",
		Synopsis: "Display file status.",
		Help:     "Display file status.",
		Args:     []rpc.Arg{{Name: "path", Kind: rpc.ArgString, Required: true, Help: "Path to node to stat."}},
		Options: []rpc.Option{
			filesFlushOption,
			{Names: []string{"format"}, Type: rpc.String, Default: defaultStatFormat,
				Help: "Print statistics in given format. Allowed tokens: <hash> <size> <cumulsize> <type> <childs> and optional <mode> <mode-octal> <mtime> <mtime-secs> <mtime-nsecs>. Conflicts with other format options."},
			{Names: []string{"hash"}, Type: rpc.Bool, Help: "Print only hash. Implies '--format=<hash>'. Conflicts with other format options."},
			{Names: []string{"size"}, Type: rpc.Bool, Help: "Print only size. Implies '--format=<cumulsize>'. Conflicts with other format options."},
			{Names: []string{"with-local"}, Type: rpc.Bool, Help: "Compute the amount of the dag that is local, and if possible the total size"},
		},
		Output: rpc.OutSingle,
		Run:    runFilesStat,
		Type:   func() any { return &FilesStatOutput{} },
		Text:   filesStatText,
	},
	{
		Path:     "files/touch",
		Synopsis: "Set or change optional POSIX modification times.",
		Help: `Examples:
    # set modification time to now.
    $ cairn files touch /foo
    # set a custom modification time.
    $ cairn files touch --mtime=1630937926 /foo`,
		Args: []rpc.Arg{{Name: "path", Kind: rpc.ArgString, Required: true, Help: "Path of target to update."}},
		Options: []rpc.Option{
			filesFlushOption, // Kubo's inherited option; touch always flushes
			{Names: []string{"mtime"}, Type: rpc.Int64, Help: "Modification time in seconds before or since the Unix Epoch to apply to created UnixFS entries."},
			{Names: []string{"mtime-nsecs"}, Type: rpc.Uint, Help: "Modification time fraction in nanoseconds"},
		},
		Output: rpc.OutNone,
		Run:    runFilesTouch,
	},
	{
		Path:     "files/write",
		Synopsis: "Append to (modify) a file in MFS.",
		Help: `Write data at the end of a file, or at a given offset within it. The whole
input is written (up to --count bytes). --create creates the file if it
does not exist; --parents creates missing directories. Writing past the
end fills the gap with zeros.

Newly created files have the CID version and hash of the Import config
unless --cid-version and --hash are given. Leaves are raw with CIDv1,
unless --raw-leaves says otherwise. 'files write' builds a trickle DAG,
so its CIDs differ from 'add'.`,
		Args: []rpc.Arg{
			{Name: "path", Kind: rpc.ArgString, Required: true, Help: "Path to write to."},
			{Name: "data", Kind: rpc.ArgFile, Required: true, Stdin: true, Help: "Data to write."},
		},
		Options: []rpc.Option{
			filesFlushOption,
			{Names: []string{"offset", "o"}, Type: rpc.Int64, Help: "Byte offset to begin writing at."},
			{Names: []string{"create", "e"}, Type: rpc.Bool, Help: "Create the file if it does not exist."},
			{Names: []string{"parents", "p"}, Type: rpc.Bool, Help: "Make parent directories as needed."},
			{Names: []string{"truncate", "t"}, Type: rpc.Bool, Help: "Truncate the file to size zero before writing."},
			{Names: []string{"count", "n"}, Type: rpc.Int64, Help: "Maximum number of bytes to read."},
			{Names: []string{"raw-leaves"}, Type: rpc.Bool, Help: "Use raw blocks for newly created leaf nodes. (experimental)"},
			filesCidVersionOption, filesHashOption,
		},
		Output: rpc.OutNone,
		Run:    runFilesWrite,
	},
}

// FilesLsOutput is the output of files ls.
type FilesLsOutput struct {
	Entries []mfs.NodeListing
}

// FilesFlushOutput is the output of files flush.
type FilesFlushOutput struct {
	Cid string
}

// FilesStatOutput is the output of files stat (Kubo's statOutput; Mode
// is octal text, as Kubo marshals it).
type FilesStatOutput struct {
	Hash           string
	Size           uint64
	CumulativeSize uint64
	Blocks         int
	Type           string
	WithLocality   bool   `json:",omitempty"`
	Local          bool   `json:",omitempty"`
	SizeLocal      uint64 `json:",omitempty"`
	Mtime          int64  `json:",omitempty"`
	MtimeNsecs     int    `json:",omitempty"`
	Mode           string `json:",omitempty"` // last, as Kubo writes it
}

// checkContentOrMFSPath takes a native IPFS URI (ipfs://<cid>, ipns://
// <name>) as the content path it names, anything else as checkMFSPath
// does: the sources of files cp and files stat (Kubo 0.43).
func checkContentOrMFSPath(p string) (string, error) {
	if u := node.FromURI(p); u != p {
		return u, nil
	}
	return checkMFSPath(p)
}

// checkMFSPath is Kubo's checkPath (cleaned, a trailing slash kept), and
// refuses ".." segments.
func checkMFSPath(p string) (string, error) {
	if len(p) == 0 {
		return "", errors.New("paths must not be empty")
	}
	if p[0] != '/' {
		return "", errors.New("paths must start with a leading slash")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", fmt.Errorf("invalid path %q: \"..\" is not allowed in MFS paths", p)
		}
	}
	cleaned := gopath.Clean(p)
	if p[len(p)-1] == '/' && p != "/" {
		cleaned += "/"
	}
	return cleaned, nil
}

// filesPrefix is Kubo's getPrefix: a builder from --cid-version and
// --hash; without them the Import config's when useConfig, else nil.
func filesPrefix(r *rpc.Request, useConfig bool) (cid.Builder, error) {
	verSet, hashSet := r.IsSet("cid-version"), r.IsSet("hash")
	if verSet || hashSet {
		ver := int(r.Int("cid-version"))
		if hashSet && ver == 0 {
			ver = 1
		}
		prefix, err := dag.PrefixForCidVersion(ver)
		if err != nil {
			return nil, err
		}
		if hashSet {
			code, ok := mh.Names[strings.ToLower(r.String("hash"))]
			if !ok {
				return nil, fmt.Errorf("unrecognized hash function: %q", r.String("hash"))
			}
			prefix.MhType = code
			prefix.MhLength = -1
		}
		return &prefix, nil
	}
	if useConfig {
		return r.Node.UnixFS().CidBuilder()
	}
	return nil, nil
}

func runFilesChcid(r *rpc.Request, _ rpc.Emitter) error {
	p := "/"
	if len(r.Args) > 0 {
		p = r.Args[0]
	}
	p, err := checkMFSPath(p)
	if err != nil {
		return err
	}
	if p == "/" {
		return errors.New("cannot change CID format of the MFS root; " +
			"use 'ipfs config Import.CidVersion' and 'ipfs config Import.HashFunction' instead")
	}
	prefix, err := filesPrefix(r, false)
	if err != nil {
		return err
	}
	m, err := r.Node.MFS(r.Ctx)
	if err != nil {
		return err
	}
	return m.Chcid(r.Ctx, p, prefix, r.Bool("flush"))
}

func runFilesCp(r *rpc.Request, _ rpc.Emitter) error {
	src, err := checkContentOrMFSPath(r.Args[0])
	if err != nil {
		return err
	}
	src = strings.TrimRight(src, "/")
	dst, err := checkMFSPath(r.Args[1])
	if err != nil {
		return err
	}
	if dst[len(dst)-1] == '/' {
		dst += gopath.Base(src)
	}
	// cp declares no --cid-version/--hash: parents made by -p use the
	// configured import format.
	prefix, err := r.Node.UnixFS().CidBuilder()
	if err != nil {
		return err
	}
	m, err := r.Node.MFS(r.Ctx)
	if err != nil {
		return err
	}
	return m.Cp(r.Ctx, src, dst, node.CpOptions{Parents: r.Bool("parents"), Force: r.Bool("force"),
		Flush: r.Bool("flush"), Builder: prefix})
}

func runFilesFlush(r *rpc.Request, e rpc.Emitter) error {
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	p := "/"
	if len(r.Args) > 0 {
		p = r.Args[0]
	}
	if p, err = checkMFSPath(p); err != nil {
		return err
	}
	m, err := r.Node.MFS(r.Ctx)
	if err != nil {
		return err
	}
	c, err := m.Flush(r.Ctx, p)
	if err != nil {
		return err
	}
	return e.Emit(&FilesFlushOutput{Cid: enc.Encode(c)})
}

func runFilesLs(r *rpc.Request, e rpc.Emitter) error {
	p := "/"
	if len(r.Args) > 0 {
		p = r.Args[0]
	}
	p, err := checkMFSPath(p)
	if err != nil {
		return err
	}
	m, err := r.Node.MFS(r.Ctx)
	if err != nil {
		return err
	}
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	entries, err := m.List(r.Ctx, p, r.Bool("long"), enc.Encode)
	if err != nil {
		return err
	}
	return e.Emit(&FilesLsOutput{Entries: entries})
}

func filesLsText(t *rpc.TextEnv, v any) error {
	out := v.(*FilesLsOutput)
	if t.Req == nil || !t.Req.Bool("U") {
		sort.SliceStable(out.Entries, func(i, j int) bool { return out.Entries[i].Name < out.Entries[j].Name })
	}
	long := t.Req != nil && t.Req.Bool("long")
	for _, o := range out.Entries {
		if long {
			if o.Type == int(mfs.TDir) {
				o.Name += "/"
			}
			fmt.Fprintf(t.Out, "%s\t%s\t%d\n", o.Name, o.Hash, o.Size)
		} else {
			fmt.Fprintf(t.Out, "%s\n", o.Name)
		}
	}
	return nil
}

func runFilesMkdir(r *rpc.Request, _ rpc.Emitter) error {
	p, err := checkMFSPath(r.Args[0])
	if err != nil {
		return err
	}
	prefix, err := filesPrefix(r, true)
	if err != nil {
		return err
	}
	m, err := r.Node.MFS(r.Ctx)
	if err != nil {
		return err
	}
	return m.Mkdir(p, r.Bool("parents"), r.Bool("flush"), prefix)
}

// runFilesChmod is Kubo's files chmod: the mode is octal.
func runFilesChmod(r *rpc.Request, _ rpc.Emitter) error {
	p, err := checkMFSPath(r.Args[1])
	if err != nil {
		return err
	}
	mode, err := strconv.ParseInt(r.Args[0], 8, 32)
	if err != nil {
		return err
	}
	m, err := r.Node.MFS(r.Ctx)
	if err != nil {
		return err
	}
	return m.Chmod(p, os.FileMode(mode))
}

// runFilesTouch is Kubo's files touch: --mtime (with --mtime-nsecs), or
// now without it.
func runFilesTouch(r *rpc.Request, _ rpc.Emitter) error {
	p, err := checkMFSPath(r.Args[0])
	if err != nil {
		return err
	}
	ts := time.Now().UTC()
	if mt := r.Int("mtime"); mt != 0 {
		ts = time.Unix(mt, r.Int("mtime-nsecs")).UTC()
	}
	m, err := r.Node.MFS(r.Ctx)
	if err != nil {
		return err
	}
	return m.Touch(p, ts)
}

func runFilesMv(r *rpc.Request, _ rpc.Emitter) error {
	src, err := checkMFSPath(r.Args[0])
	if err != nil {
		return err
	}
	dst, err := checkMFSPath(r.Args[1])
	if err != nil {
		return err
	}
	m, err := r.Node.MFS(r.Ctx)
	if err != nil {
		return err
	}
	return m.Mv(r.Ctx, src, dst, r.Bool("flush"))
}

func runFilesRead(r *rpc.Request, e rpc.Emitter) error {
	p, err := checkMFSPath(r.Args[0])
	if err != nil {
		return err
	}
	m, err := r.Node.MFS(r.Ctx)
	if err != nil {
		return err
	}
	var count *int64
	if r.IsSet("count") {
		c := r.Int("count")
		count = &c
	}
	return m.ReadFile(r.Ctx, p, r.Int("offset"), count, e)
}

func runFilesRm(r *rpc.Request, e rpc.Emitter) error {
	if !r.Bool("flush") {
		return errors.New("files rm always flushes for safety. The --flush flag cannot be set to false for this command")
	}
	m, err := r.Node.MFS(r.Ctx)
	if err != nil {
		return err
	}
	// Invalid paths are reported in argument order among the others.
	bad := make([]error, len(r.Args))
	var paths []string
	for i, arg := range r.Args {
		p, err := checkMFSPath(arg)
		if err != nil {
			bad[i] = fmt.Errorf("%s is not a valid path: %s", arg, err)
			continue
		}
		paths = append(paths, p)
	}
	rmErrs, err := m.Remove(paths, r.Bool("force"), r.Bool("recursive"))
	if err != nil {
		return err
	}
	var errs []string
	j := 0
	for i := range r.Args {
		if bad[i] != nil {
			errs = append(errs, bad[i].Error())
			continue
		}
		if rmErrs[j] != nil {
			errs = append(errs, fmt.Sprintf("%s: %s", paths[j], rmErrs[j]))
		}
		j++
	}
	if len(errs) > 0 {
		for _, msg := range errs {
			if err := e.Emit(msg); err != nil {
				return err
			}
		}
		return errors.New("can't remove some files")
	}
	return nil
}

func statFormat(r *rpc.Request) (string, error) {
	hash, size := r.Bool("hash"), r.Bool("size")
	format := r.String("format")
	custom := format != defaultStatFormat
	if hash && size || size && custom || hash && custom {
		return "", errors.New("format was set by multiple options. Only one format option is allowed")
	}
	switch {
	case hash:
		return "<hash>", nil
	case size:
		return "<cumulsize>", nil
	}
	return format, nil
}

func runFilesStat(r *rpc.Request, e rpc.Emitter) error {
	if _, err := statFormat(r); err != nil {
		return rpc.ClientError("invalid parameters: %s", err)
	}
	p, err := checkContentOrMFSPath(r.Args[0])
	if err != nil {
		return err
	}
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	m, err := r.Node.MFS(r.Ctx)
	if err != nil {
		return err
	}
	nd, err := m.Node(r.Ctx, p)
	if err != nil {
		return err
	}
	out, err := statNode(nd, enc)
	if err != nil {
		return err
	}
	if r.Bool("with-local") {
		local, sizeLocal, err := m.LocalSize(r.Ctx, nd)
		if err != nil {
			return err
		}
		out.WithLocality, out.Local, out.SizeLocal = true, local, sizeLocal
	}
	return e.Emit(out)
}

func statNode(nd ipld.Node, enc rpc.CidEncoder) (*FilesStatOutput, error) {
	cumul, err := nd.Size()
	if err != nil {
		return nil, err
	}
	switch n := nd.(type) {
	case *dag.RawNode:
		return &FilesStatOutput{Hash: enc.Encode(nd.Cid()), Size: cumul, CumulativeSize: cumul, Type: "file"}, nil
	case *dag.ProtoNode:
		d, err := ft.FSNodeFromBytes(n.Data())
		if err != nil {
			return nil, err
		}
		out := &FilesStatOutput{Hash: enc.Encode(nd.Cid()), Blocks: len(n.Links()), Size: d.FileSize(), CumulativeSize: cumul}
		switch d.Type() {
		case ft.TDirectory, ft.THAMTShard:
			out.Type = "directory"
		case ft.TFile, ft.TSymlink, ft.TMetadata, ft.TRaw:
			out.Type = "file"
		default:
			return nil, fmt.Errorf("unrecognized node type: %s", d.Type())
		}
		var mode os.FileMode
		if mode = d.Mode(); mode == 0 && d.Type() == ft.TSymlink {
			mode = os.ModeSymlink | 0o777
		}
		if mode != 0 {
			out.Mode = fmt.Sprintf("%04o", uint32(mode))
		}
		if mt := d.ModTime(); !mt.IsZero() {
			out.Mtime = mt.Unix()
			out.MtimeNsecs = mt.Nanosecond()
		}
		return out, nil
	}
	return nil, errors.New("not unixfs node (proto or raw)")
}

func filesStatText(t *rpc.TextEnv, v any) error {
	out := v.(*FilesStatOutput)
	const unset = "not set"
	mode, modeo := unset, unset
	if m, err := strconv.ParseUint(out.Mode, 8, 32); err == nil && m != 0 {
		mode = strings.ToLower(os.FileMode(m).String())
		modeo = "0" + strconv.FormatUint(m&0x1FF, 8)
	}
	mtime, mtimes, mtimens := unset, unset, unset
	if out.Mtime > 0 {
		mtime = time.Unix(out.Mtime, int64(out.MtimeNsecs)).UTC().Format("2 Jan 2006, 15:04:05 MST")
		mtimes = strconv.FormatInt(out.Mtime, 10)
		mtimens = strconv.Itoa(out.MtimeNsecs)
	}
	s := defaultStatFormat
	if t.Req != nil {
		s, _ = statFormat(t.Req)
	}
	s = strings.NewReplacer(
		"<hash>", out.Hash,
		"<size>", strconv.FormatUint(out.Size, 10),
		"<cumulsize>", strconv.FormatUint(out.CumulativeSize, 10),
		"<childs>", strconv.Itoa(out.Blocks),
		"<type>", out.Type,
		"<mode>", mode,
		"<mode-octal>", modeo,
		"<mtime>", mtime,
		"<mtime-secs>", mtimes,
		"<mtime-nsecs>", mtimens,
	).Replace(s)
	fmt.Fprintln(t.Out, s)
	if out.WithLocality {
		fmt.Fprintf(t.Out, "Local: %s of %s (%.2f%%)\n",
			humanize.Bytes(out.SizeLocal), humanize.Bytes(out.CumulativeSize),
			100.0*float64(out.SizeLocal)/float64(out.CumulativeSize))
	}
	return nil
}

func runFilesWrite(r *rpc.Request, _ rpc.Emitter) error {
	p, err := checkMFSPath(r.Args[0])
	if err != nil {
		return err
	}
	o := node.WriteOptions{Offset: r.Int("offset"), Create: r.Bool("create"), Parents: r.Bool("parents"),
		Truncate: r.Bool("truncate"), Flush: r.Bool("flush")}
	if r.IsSet("raw-leaves") {
		raw := r.Bool("raw-leaves")
		o.RawLeaves = &raw
	}
	if r.IsSet("count") {
		c := r.Int("count")
		o.Count = &c
	}
	if o.Builder, err = filesPrefix(r, true); err != nil {
		return err
	}
	m, err := r.Node.MFS(r.Ctx)
	if err != nil {
		return err
	}
	var in io.Reader
	err = m.Write(r.Ctx, p, func() (io.Reader, error) {
		f, err := firstFile(r.Files)
		in = f
		return f, err
	}, o)
	if in != nil {
		// Read what --count left of the upload before answering:
		// closing a socket with unread input resets it, and the client
		// then loses the answer (ECONNRESET).
		_, _ = io.Copy(io.Discard, in)
	}
	return err
}

// toFiles is add's --to-files: after each top-level entry, a reference to
// it is put at dst in MFS (Kubo 0.42 semantics and errors).
func toFiles(r *rpc.Request, dst string) func(name string, nd ipld.Node) error {
	added := false
	return func(name string, nd ipld.Node) error {
		if name == "" {
			return errors.New("to-files: cannot add unnamed files to MFS")
		}
		if dst == "" {
			dst = "/"
		}
		d, err := checkMFSPath(dst)
		if err != nil {
			return fmt.Errorf("to-files: %w", err)
		}
		m, err := r.Node.MFS(r.Ctx)
		if err != nil {
			return err
		}
		if err := m.PutRef(r.Ctx, d, name, nd, !added); err != nil {
			return err
		}
		added = true
		return nil
	}
}

func runFilesChroot(r *rpc.Request, e rpc.Emitter) error {
	if !r.Bool("confirm") {
		return errors.New("this is a potentially destructive operation; pass --confirm to proceed")
	}
	c := ft.EmptyDirNode().Cid()
	if len(r.Args) > 0 {
		var err error
		if c, err = cid.Decode(r.Args[0]); err != nil {
			return fmt.Errorf("invalid CID %q: %w", r.Args[0], err)
		}
	}
	old, err := r.Node.ChrootMFS(r.Ctx, c)
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("MFS root set to %s\n", c)
	if old.Defined() {
		msg = fmt.Sprintf("MFS root changed from %s to %s\nThe old root %s will be garbage collected unless pinned.\n", old, c, old)
	}
	return e.Emit(&MessageOutput{Message: msg})
}
