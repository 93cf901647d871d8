// files.go: the "files" commands (the mutable file system, MFS) and add's
// --to-files, as Kubo 0.42 has them.
//
// Every command takes Kubo's inherited files option flush/f (default
// true): declared here on each command, since the table has no "files"
// parent command to carry it.

package httprpc

import (
	"context"
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

	humanize "github.com/dustin/go-humanize"
	"github.com/ipfs/boxo/filestore/posinfo"
	dag "github.com/ipfs/boxo/ipld/merkledag"
	ft "github.com/ipfs/boxo/ipld/unixfs"
	"github.com/ipfs/boxo/mfs"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
	mh "github.com/multiformats/go-multihash"
)

var (
	filesFlushOption = Option{Names: []string{"flush", "f"}, Type: Bool, Default: true,
		Help: "Flush target and ancestors after write."}
	filesCidVersionOption = Option{Names: []string{"cid-version", "cid-ver"}, Type: Int,
		Help: "Cid version to use. (experimental)"}
	filesHashOption = Option{Names: []string{"hash"}, Type: String,
		Help: "Hash function to use. Will set Cid version to 1 if used. (experimental)"}
)

const defaultStatFormat = `<hash>
Size: <size>
CumulativeSize: <cumulsize>
ChildBlocks: <childs>
Type: <type>
Mode: <mode> (<mode-octal>)
Mtime: <mtime>`

var filesCommands = []*Command{
	{
		Path:     "files/chcid",
		Synopsis: "Change the CID version or hash function of the root node of a given path.",
		Help: `Change the CID version or hash function of the root node of a given path.

The MFS root ('/') CID format follows Import.CidVersion and
Import.HashFunction in the config; this command only works on
subdirectories of the MFS root.`,
		Args:    []Arg{{Name: "path", Kind: ArgString, Help: "Path to change (must not be '/'). Default: '/'."}},
		Options: []Option{filesFlushOption, filesCidVersionOption, filesHashOption},
		Output:  OutNone,
		Run:     runFilesChcid,
	},
	{
		Path:     "files/cp",
		Synopsis: "Add references to IPFS files and directories in MFS (or copy within MFS).",
		Help: `"files cp" adds a reference to any IPFS file or directory (/ipfs/<cid>...)
into MFS, or copies within MFS. Only the root node is copied (lazy copy);
when an IPFS path matches an MFS path, the IPFS path wins.`,
		Args: []Arg{
			{Name: "source", Kind: ArgString, Required: true, Help: "Source IPFS or MFS path to copy."},
			{Name: "dest", Kind: ArgString, Required: true, Help: "Destination within MFS."},
		},
		Options: []Option{
			filesFlushOption,
			{Names: []string{"force"}, Type: Bool, Help: "Force overwrite of existing files."},
			{Names: []string{"parents", "p"}, Type: Bool, Help: "Make parent directories as needed."},
		},
		Output: OutNone,
		Run:    runFilesCp,
	},
	{
		Path:     "files/flush",
		Synopsis: "Flush a given path's data to disk.",
		Help:     "Flush a given path to the disk. This is only useful when other commands are run with '--flush=false'.",
		Args:     []Arg{{Name: "path", Kind: ArgString, Help: "Path to flush. Default: '/'."}},
		Options:  []Option{filesFlushOption},
		Output:   OutSingle,
		Run:      runFilesFlush,
		Type:     func() any { return &FilesFlushOutput{} },
		Text:     func(t *TextEnv, v any) error { return nil },
	},
	{
		Path:     "files/ls",
		Synopsis: "List directories in the local mutable namespace.",
		Help:     "List directories in the local mutable namespace.",
		Args:     []Arg{{Name: "path", Kind: ArgString, Help: "Path to show listing for. Defaults to '/'."}},
		Options: []Option{
			filesFlushOption,
			{Names: []string{"long", "l"}, Type: Bool, Help: "Use long listing format."},
			{Names: []string{"U"}, Type: Bool, Help: "Do not sort; list entries in directory order."},
		},
		Output: OutSingle,
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
		Args: []Arg{{Name: "path", Kind: ArgString, Required: true, Help: "Path to dir to make."}},
		Options: []Option{
			filesFlushOption,
			{Names: []string{"parents", "p"}, Type: Bool, Help: "No error if existing, make parent directories as needed."},
			filesCidVersionOption, filesHashOption,
		},
		Output: OutNone,
		Run:    runFilesMkdir,
	},
	{
		Path:     "files/mv",
		Synopsis: "Move files.",
		Help:     "Move files around. Just like the traditional Unix mv.",
		Args: []Arg{
			{Name: "source", Kind: ArgString, Required: true, Help: "Source file to move."},
			{Name: "dest", Kind: ArgString, Required: true, Help: "Destination path for file to be moved to."},
		},
		Options: []Option{filesFlushOption},
		Output:  OutNone,
		Run:     runFilesMv,
	},
	{
		Path:     "files/read",
		Synopsis: "Read a file from MFS.",
		Help: `Read a specified number of bytes from a file at a given offset. By default,
it will read the entire file similar to the Unix cat.`,
		Args: []Arg{{Name: "path", Kind: ArgString, Required: true, Help: "Path to file to be read."}},
		Options: []Option{
			filesFlushOption,
			{Names: []string{"offset", "o"}, Type: Int64, Help: "Byte offset to begin reading from."},
			{Names: []string{"count", "n"}, Type: Int64, Help: "Maximum number of bytes to read."},
		},
		Output: OutBytes,
		Run:    runFilesRead,
	},
	{
		Path:     "files/rm",
		Synopsis: "Remove a file from MFS.",
		Help:     "Remove files or directories.",
		Args:     []Arg{{Name: "path", Kind: ArgString, Required: true, Variadic: true, Help: "File to remove."}},
		Options: []Option{
			filesFlushOption,
			{Names: []string{"recursive", "r"}, Type: Bool, Help: "Recursively remove directories."},
			{Names: []string{"force"}, Type: Bool, Help: "Forcibly remove target at path; implies -r for directories"},
		},
		Output: OutNone,
		Run:    runFilesRm,
	},
	{
		Path:     "files/stat",
		Synopsis: "Display file status.",
		Help:     "Display file status.",
		Args:     []Arg{{Name: "path", Kind: ArgString, Required: true, Help: "Path to node to stat."}},
		Options: []Option{
			filesFlushOption,
			{Names: []string{"format"}, Type: String, Default: defaultStatFormat,
				Help: "Print statistics in given format. Allowed tokens: <hash> <size> <cumulsize> <type> <childs> and optional <mode> <mode-octal> <mtime> <mtime-secs> <mtime-nsecs>. Conflicts with other format options."},
			{Names: []string{"hash"}, Type: Bool, Help: "Print only hash. Implies '--format=<hash>'. Conflicts with other format options."},
			{Names: []string{"size"}, Type: Bool, Help: "Print only size. Implies '--format=<cumulsize>'. Conflicts with other format options."},
			{Names: []string{"with-local"}, Type: Bool, Help: "Compute the amount of the dag that is local, and if possible the total size"},
		},
		Output: OutSingle,
		Run:    runFilesStat,
		Type:   func() any { return &FilesStatOutput{} },
		Text:   filesStatText,
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
		Args: []Arg{
			{Name: "path", Kind: ArgString, Required: true, Help: "Path to write to."},
			{Name: "data", Kind: ArgFile, Required: true, Stdin: true, Help: "Data to write."},
		},
		Options: []Option{
			filesFlushOption,
			{Names: []string{"offset", "o"}, Type: Int64, Help: "Byte offset to begin writing at."},
			{Names: []string{"create", "e"}, Type: Bool, Help: "Create the file if it does not exist."},
			{Names: []string{"parents", "p"}, Type: Bool, Help: "Make parent directories as needed."},
			{Names: []string{"truncate", "t"}, Type: Bool, Help: "Truncate the file to size zero before writing."},
			{Names: []string{"count", "n"}, Type: Int64, Help: "Maximum number of bytes to read."},
			{Names: []string{"raw-leaves"}, Type: Bool, Help: "Use raw blocks for newly created leaf nodes. (experimental)"},
			filesCidVersionOption, filesHashOption,
		},
		Output: OutNone,
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
	Mode           string `json:",omitempty"`
	Mtime          int64  `json:",omitempty"`
	MtimeNsecs     int    `json:",omitempty"`
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
func filesPrefix(r *Request, useConfig bool) (cid.Builder, error) {
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
		return r.Node.ImportCidBuilder()
	}
	return nil, nil
}

// mfsOp runs fn as one tree-changing MFS command (see node.MFS.Begin).
func mfsOp(r *Request, flush bool, fn func(m *node.MFS) error) error {
	m, err := r.Node.MFS(r.Ctx)
	if err != nil {
		return err
	}
	end, err := m.Begin(flush)
	if err != nil {
		return err
	}
	err = fn(m)
	if eerr := end(); err == nil {
		err = eerr
	}
	return err
}

// nodeFromPath resolves an /ipfs/ path through the DAG, anything else in
// MFS (Kubo's getNodeFromPath).
func nodeFromPath(ctx context.Context, r *Request, m *node.MFS, p string) (ipld.Node, error) {
	if strings.HasPrefix(p, "/ipfs/") {
		res, err := r.Node.Resolve(ctx, p)
		if err != nil {
			return nil, err
		}
		return res.Node, nil
	}
	fsn, err := mfs.Lookup(m.Root(), p)
	if err != nil {
		return nil, err
	}
	return fsn.GetNode()
}

func getParentDir(root *mfs.Root, dir string) (*mfs.Directory, error) {
	parent, err := mfs.Lookup(root, dir)
	if err != nil {
		return nil, err
	}
	pdir, ok := parent.(*mfs.Directory)
	if !ok {
		return nil, errors.New("expected *mfs.Directory, didn't get it. This is likely a race condition")
	}
	return pdir, nil
}

func ensureContainingDirectoryExists(r *mfs.Root, p string, opts ...mfs.Option) error {
	dir := gopath.Dir(p)
	if dir == "/" {
		return nil
	}
	return mfs.Mkdir(r, dir, mfs.MkdirOpts{Mkparents: true}, opts...)
}

func runFilesChcid(r *Request, _ Emitter) error {
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
	flush := r.Bool("flush")
	return mfsOp(r, flush, func(m *node.MFS) error {
		if prefix != nil {
			fsn, err := mfs.Lookup(m.Root(), p)
			if err != nil {
				return err
			}
			d, ok := fsn.(*mfs.Directory)
			if !ok {
				return errors.New("can only update directories")
			}
			d.SetCidBuilder(prefix)
		}
		if !flush {
			return nil
		}
		if _, err := mfs.FlushPath(r.Ctx, m.Root(), p); err != nil {
			return err
		}
		_, err := mfs.FlushPath(r.Ctx, m.Root(), gopath.Dir(p))
		return err
	})
}

func runFilesCp(r *Request, _ Emitter) error {
	src, err := checkMFSPath(r.Args[0])
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
	prefix, err := r.Node.ImportCidBuilder()
	if err != nil {
		return err
	}
	flush := r.Bool("flush")
	return mfsOp(r, flush, func(m *node.MFS) error {
		nd, err := nodeFromPath(r.Ctx, r, m, src)
		if err != nil {
			return fmt.Errorf("cp: cannot get node from path %s: %s", src, err)
		}
		if err := checkUnixFS(nd); err != nil {
			return err
		}
		if r.Bool("parents") {
			opts, err := r.Node.MFSDirOptions(prefix)
			if err != nil {
				return err
			}
			if err := ensureContainingDirectoryExists(m.Root(), dst, opts...); err != nil {
				return err
			}
		}
		if r.Bool("force") {
			if err := unlinkIfExists(m.Root(), dst); err != nil {
				return fmt.Errorf("cp: cannot unlink existing file: %s", err)
			}
		}
		if err := mfs.PutNode(m.Root(), dst, nd); err != nil {
			return fmt.Errorf("cp: cannot put node in path %s: %s", dst, err)
		}
		if !flush {
			return nil
		}
		if _, err := mfs.FlushPath(r.Ctx, m.Root(), dst); err != nil {
			return fmt.Errorf("cp: cannot flush the created file %s: %s", dst, err)
		}
		if _, err := mfs.FlushPath(r.Ctx, m.Root(), gopath.Dir(dst)); err != nil {
			return fmt.Errorf("cp: cannot flush the created file's parent folder %s: %s", dst, err)
		}
		return nil
	})
}

var errFilesCpInvalidUnixFS = errors.New("cp: source must be a valid UnixFS (dag-pb or raw codec)")

// checkUnixFS accepts what Kubo's files cp accepts as a source root.
func checkUnixFS(nd ipld.Node) error {
	switch nd.Cid().Type() {
	case cid.Raw:
		if _, ok := nd.(*dag.RawNode); !ok {
			return errFilesCpInvalidUnixFS
		}
	case cid.DagProtobuf:
		pn, ok := nd.(*dag.ProtoNode)
		if !ok {
			return errFilesCpInvalidUnixFS
		}
		if _, err := ft.FSNodeFromBytes(pn.Data()); err != nil {
			return fmt.Errorf("%w: %v", errFilesCpInvalidUnixFS, err)
		}
	default:
		return errFilesCpInvalidUnixFS
	}
	return nil
}

func unlinkIfExists(root *mfs.Root, p string) error {
	dir, name := gopath.Split(p)
	parent, err := mfs.Lookup(root, dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	pdir, ok := parent.(*mfs.Directory)
	if !ok {
		return fmt.Errorf("not a directory: %s", dir)
	}
	child, err := pdir.Child(name)
	if err != nil {
		return nil
	}
	if child.Type() != mfs.TFile {
		return fmt.Errorf("not a file: %s", p)
	}
	return pdir.Unlink(name)
}

func runFilesFlush(r *Request, e Emitter) error {
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
	var c cid.Cid
	err = mfsOp(r, true, func(m *node.MFS) error {
		nd, err := mfs.FlushPath(r.Ctx, m.Root(), p)
		if err != nil {
			return err
		}
		c = nd.Cid()
		return nil
	})
	if err != nil {
		return err
	}
	return e.Emit(&FilesFlushOutput{Cid: enc.Encode(c)})
}

func runFilesLs(r *Request, e Emitter) error {
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
	fsn, err := mfs.Lookup(m.Root(), p)
	if err != nil {
		return err
	}
	long := r.Bool("long")
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	switch fsn := fsn.(type) {
	case *mfs.Directory:
		if long {
			list, err := fsn.List(r.Ctx)
			if err != nil {
				return err
			}
			return e.Emit(&FilesLsOutput{Entries: list})
		}
		names, err := fsn.ListNames(r.Ctx)
		if err != nil {
			return err
		}
		var out []mfs.NodeListing
		for _, name := range names {
			out = append(out, mfs.NodeListing{Name: name})
		}
		return e.Emit(&FilesLsOutput{Entries: out})
	case *mfs.File:
		_, name := gopath.Split(p)
		out := &FilesLsOutput{Entries: []mfs.NodeListing{{Name: name}}}
		if long {
			out.Entries[0].Type = int(fsn.Type())
			size, err := fsn.Size()
			if err != nil {
				return err
			}
			out.Entries[0].Size = size
			nd, err := fsn.GetNode()
			if err != nil {
				return err
			}
			out.Entries[0].Hash = enc.Encode(nd.Cid())
		}
		return e.Emit(out)
	}
	return errors.New("unrecognized type")
}

func filesLsText(t *TextEnv, v any) error {
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

func runFilesMkdir(r *Request, _ Emitter) error {
	p, err := checkMFSPath(r.Args[0])
	if err != nil {
		return err
	}
	flush := r.Bool("flush")
	return mfsOp(r, flush, func(m *node.MFS) error {
		prefix, err := filesPrefix(r, true)
		if err != nil {
			return err
		}
		opts, err := r.Node.MFSDirOptions(prefix)
		if err != nil {
			return err
		}
		return mfs.Mkdir(m.Root(), p, mfs.MkdirOpts{Mkparents: r.Bool("parents"), Flush: flush}, opts...)
	})
}

func runFilesMv(r *Request, _ Emitter) error {
	flush := r.Bool("flush")
	return mfsOp(r, flush, func(m *node.MFS) error {
		src, err := checkMFSPath(r.Args[0])
		if err != nil {
			return err
		}
		dst, err := checkMFSPath(r.Args[1])
		if err != nil {
			return err
		}
		if err := mfs.Mv(m.Root(), src, dst); err != nil {
			return err
		}
		if !flush {
			return nil
		}
		psrc, pdst := gopath.Dir(src), gopath.Dir(dst)
		if _, err := mfs.FlushPath(r.Ctx, m.Root(), pdst); err != nil {
			return fmt.Errorf("cp: cannot flush the destination file's parent folder %s: %s", dst, err)
		}
		if psrc != pdst {
			if _, err := mfs.FlushPath(r.Ctx, m.Root(), psrc); err != nil {
				return fmt.Errorf("cp: cannot flush the source's file's parent folder %s: %s", dst, err)
			}
		}
		_, err = mfs.FlushPath(r.Ctx, m.Root(), "/")
		return err
	})
}

func runFilesRead(r *Request, e Emitter) error {
	p, err := checkMFSPath(r.Args[0])
	if err != nil {
		return err
	}
	m, err := r.Node.MFS(r.Ctx)
	if err != nil {
		return err
	}
	fsn, err := mfs.Lookup(m.Root(), p)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	fi, ok := fsn.(*mfs.File)
	if !ok {
		return fmt.Errorf("%s was not a file", p)
	}
	nd, err := fi.GetNode()
	if err != nil {
		return err
	}
	if pn, ok := nd.(*dag.ProtoNode); ok {
		if fsn, err := ft.FSNodeFromBytes(pn.Data()); err == nil && fsn.Type() == ft.TSymlink {
			return errors.New("symlinks not yet supported")
		}
	}
	offset := r.Int("offset")
	if offset < 0 {
		return errors.New("cannot specify negative offset")
	}
	size, err := fi.Size()
	if err != nil {
		return err
	}
	if offset > size {
		return fmt.Errorf("offset was past end of file (%d > %d)", offset, size)
	}
	count := int64(-1)
	if r.IsSet("count") {
		if count = r.Int("count"); count < 0 {
			return errors.New("cannot specify negative 'count'")
		}
	}
	if err := m.Sync(); err != nil {
		return err
	}
	return r.Node.WriteFile(r.Ctx, nd.Cid(), offset, count, e)
}

func runFilesRm(r *Request, _ Emitter) error {
	if !r.Bool("flush") {
		return errors.New("files rm always flushes for safety. The --flush flag cannot be set to false for this command")
	}
	force, dashr := r.Bool("force"), r.Bool("recursive")
	var errs []string
	err := mfsOp(r, true, func(m *node.MFS) error {
		for _, arg := range r.Args {
			p, err := checkMFSPath(arg)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s is not a valid path: %s", arg, err))
				continue
			}
			if err := removePath(m.Root(), p, force, dashr); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %s", p, err))
			}
		}
		return nil
	})
	switch {
	case err != nil:
		return err
	case len(errs) == 1:
		return errors.New(errs[0])
	case len(errs) > 1:
		return fmt.Errorf("can't remove some files: %s", strings.Join(errs, "; "))
	}
	return nil
}

func removePath(root *mfs.Root, p string, force, dashr bool) error {
	if p == "/" {
		return errors.New("cannot delete root")
	}
	p = strings.TrimSuffix(p, "/")
	dir, name := gopath.Split(p)
	pdir, err := getParentDir(root, dir)
	if err != nil {
		if force && errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	if force {
		if err := pdir.Unlink(name); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		return pdir.Flush()
	}
	child, err := pdir.Child(name)
	if err != nil {
		return err
	}
	if _, isDir := child.(*mfs.Directory); isDir && !dashr {
		return errors.New("path is a directory, use -r to remove directories")
	}
	if err := pdir.Unlink(name); err != nil {
		return err
	}
	return pdir.Flush()
}

func statFormat(r *Request) (string, error) {
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

func runFilesStat(r *Request, e Emitter) error {
	if _, err := statFormat(r); err != nil {
		return ClientError("invalid parameters: %s", err)
	}
	p, err := checkMFSPath(r.Args[0])
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
	nd, err := nodeFromPath(r.Ctx, r, m, p)
	if err != nil {
		return err
	}
	out, err := statNode(nd, enc)
	if err != nil {
		return err
	}
	if r.Bool("with-local") {
		if err := m.Sync(); err != nil {
			return err
		}
		local, sizeLocal, err := walkLocal(r.Ctx, r.Node.DAG, nd)
		if err != nil {
			return err
		}
		out.WithLocality, out.Local, out.SizeLocal = true, local, sizeLocal
	}
	return e.Emit(out)
}

func statNode(nd ipld.Node, enc CidEncoder) (*FilesStatOutput, error) {
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

// walkLocal is Kubo's walkBlock: whether the whole DAG is stored, and the
// bytes of the part that is.
func walkLocal(ctx context.Context, dserv ipld.DAGService, nd ipld.Node) (bool, uint64, error) {
	size := uint64(len(nd.RawData()))
	local := true
	for _, l := range nd.Links() {
		child, err := dserv.Get(ctx, l.Cid)
		if ipld.IsNotFound(err) {
			local = false
			continue
		}
		if err != nil {
			return local, size, err
		}
		cl, cs, err := walkLocal(ctx, dserv, child)
		if err != nil {
			return local, size, err
		}
		local = local && cl
		size += cs
	}
	return local, size, nil
}

func filesStatText(t *TextEnv, v any) error {
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

func runFilesWrite(r *Request, _ Emitter) error {
	p, err := checkMFSPath(r.Args[0])
	if err != nil {
		return err
	}
	create, parents, trunc, flush := r.Bool("create"), r.Bool("parents"), r.Bool("truncate"), r.Bool("flush")
	rawSet := r.IsSet("raw-leaves")
	raw := r.Bool("raw-leaves")
	return mfsOp(r, flush, func(m *node.MFS) (err error) {
		if imp := r.Node.Cfg().Import; !rawSet && imp.UnixFSRawLeaves != nil {
			rawSet, raw = true, *imp.UnixFSRawLeaves
		}
		prefix, err := filesPrefix(r, true)
		if err != nil {
			return err
		}
		offset := r.Int("offset")
		if offset < 0 {
			return errors.New("cannot have negative write offset")
		}
		if parents {
			opts, err := r.Node.MFSDirOptions(prefix)
			if err != nil {
				return err
			}
			if err := ensureContainingDirectoryExists(m.Root(), p, opts...); err != nil {
				return err
			}
		}
		fi, err := fileHandle(m.Root(), p, create, prefix)
		if err != nil {
			return err
		}
		if rawSet {
			fi.RawLeaves = raw
		}
		wfd, err := fi.Open(mfs.Flags{Write: true, Sync: flush})
		if err != nil {
			return err
		}
		defer func() {
			if cerr := wfd.Close(); err == nil {
				err = cerr
			}
			if flush {
				if _, ferr := mfs.FlushPath(r.Ctx, m.Root(), gopath.Dir(p)); err == nil {
					err = ferr
				}
			}
		}()
		if trunc {
			if err := wfd.Truncate(0); err != nil {
				return err
			}
		}
		count := r.Int("count")
		if r.IsSet("count") && count < 0 {
			return errors.New("cannot have negative byte count")
		}
		if _, err := wfd.Seek(offset, io.SeekStart); err != nil {
			return err
		}
		var in io.Reader
		if in, err = firstFile(r.Files); err != nil {
			return err
		}
		if r.IsSet("count") {
			in = io.LimitReader(in, count)
		}
		_, err = io.Copy(wfd, in)
		return err
	})
}

// fileHandle is Kubo's getFileHandle: the file at p, created empty (with
// builder, or its directory's) when create is set.
func fileHandle(root *mfs.Root, p string, create bool, builder cid.Builder) (*mfs.File, error) {
	target, err := mfs.Lookup(root, p)
	switch {
	case err == nil:
		fi, ok := target.(*mfs.File)
		if !ok {
			return nil, fmt.Errorf("%s was not a file", p)
		}
		return fi, nil
	case !errors.Is(err, os.ErrNotExist) || !create:
		return nil, err
	}
	dir, name := gopath.Split(p)
	pdir, err := getParentDir(root, dir)
	if err != nil {
		return nil, err
	}
	if builder == nil {
		builder = pdir.GetCidBuilder()
	}
	nd := dag.NodeWithData(ft.FilePBData(nil, 0))
	if err := nd.SetCidBuilder(builder); err != nil {
		return nil, err
	}
	if err := pdir.AddChild(name, nd); err != nil {
		return nil, err
	}
	fsn, err := pdir.Child(name)
	if err != nil {
		return nil, err
	}
	fi, ok := fsn.(*mfs.File)
	if !ok {
		return nil, errors.New("expected *mfs.File, didn't get it. This is likely a race condition")
	}
	return fi, nil
}

// toFiles is add's --to-files: after each top-level entry, a reference to
// it is put at dst in MFS (Kubo 0.42 semantics and errors).
func toFiles(r *Request, dst string) func(name string, nd ipld.Node) error {
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
		if fn, ok := nd.(*posinfo.FilestoreNode); ok {
			nd = fn.Node
		}
		return mfsOp(r, true, func(m *node.MFS) error {
			asDir := d[len(d)-1] == '/'
			if asDir {
				fsn, err := mfs.Lookup(m.Root(), d)
				if err != nil {
					return fmt.Errorf("to-files: MFS destination directory %q does not exist: %w", d, err)
				}
				if fsn.Type() != mfs.TDir {
					return fmt.Errorf("to-files: MFS destination %q is not a directory", d)
				}
				d += gopath.Base(name)
			}
			if added && !asDir {
				return fmt.Errorf("to-files: MFS destination is a file: only one entry can be copied to %q", d)
			}
			if _, err := mfs.Lookup(m.Root(), gopath.Dir(d)); err != nil {
				return fmt.Errorf("to-files: MFS destination parent %q %q does not exist: %w", d, gopath.Dir(d), err)
			}
			if err := mfs.PutNode(m.Root(), d, nd); err != nil {
				return fmt.Errorf("to-files: cannot put node in path %q: %w", d, err)
			}
			added = true
			_, err := mfs.FlushPath(r.Ctx, m.Root(), gopath.Dir(d))
			return err
		})
	}
}
