// get.go: the "get" command. The server streams a tar (or gzip) made on
// the fly from the DAG; GetOutput is the CLI half that saves or extracts
// that stream.

package commands

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"cairn/node"
	"cairn/rpc"

	"github.com/klauspost/compress/gzip"
	"golang.org/x/sys/unix"
)

var getCommands = []*rpc.Command{{
	Path:         "get",
	ClientOutput: func(r *rpc.Request, body io.Reader, stdout io.Writer) error { return GetOutput(r, body, stdout) },
	Synopsis:     "Download IPFS objects.",
	Help: `Stores to disk the data contained an IPFS object at the given path.

By default, the output will be stored at './<ipfs-path>', but an alternate
path can be specified with '--output=<path>' or '-o=<path>'.

To output a TAR archive instead of unpacked files, use '--archive' or '-a'.

To compress the output with GZIP compression, use '--compress' or '-C'. You
may also specify the level of compression by specifying '-l=<1-9>'.`,
	Args: []rpc.Arg{{Name: "ipfs-path", Kind: rpc.ArgString, Required: true, Stdin: true,
		Help: "The path to the IPFS object(s) to be outputted."}},
	Options: []rpc.Option{
		{Names: []string{"output", "o"}, Type: rpc.String, Help: "The path where the output should be stored."},
		{Names: []string{"archive", "a"}, Type: rpc.Bool, Help: "Output a TAR archive."},
		{Names: []string{"compress", "C"}, Type: rpc.Bool, Help: "Compress the output with GZIP compression."},
		{Names: []string{"compression-level", "l"}, Type: rpc.Int, Help: "The level of compression (1-9)."},
		{Names: []string{"progress", "p"}, Type: rpc.Bool, Help: "Stream progress data. Defaults to true when stderr is a terminal."},
	},
	Output: rpc.OutBytes,
	Run:    runGet,
	ContentType: func(r *rpc.Request) string {
		if r.Bool("compress") {
			return "application/gzip"
		}
		return "application/x-tar"
	},
}}

// errCompressionLevel is Kubo's text.
var errCompressionLevel = errors.New("compression level must be between 1 and 9")

// getCompression returns the gzip level the request asks for, or
// gzip.NoCompression without --compress.
func getCompression(r *rpc.Request) (int, error) {
	if !r.Bool("compress") {
		return gzip.NoCompression, nil
	}
	if !r.IsSet("compression-level") {
		return gzip.DefaultCompression, nil
	}
	l := r.Int("compression-level")
	if l < 1 || l > 9 {
		return gzip.NoCompression, errCompressionLevel
	}
	return int(l), nil
}

// getEntryName is the name of the top tar entry: the last component of
// the argument as a path, with the CID text kept as typed.
func getEntryName(arg string) string {
	arg = node.FromURI(arg)
	if !strings.HasPrefix(arg, "/") {
		arg = "/ipfs/" + arg
	}
	return path.Base(path.Clean(arg))
}

func runGet(r *rpc.Request, e rpc.Emitter) error {
	level, err := getCompression(r)
	if err != nil {
		return err
	}
	arg := r.Args[0]
	res, err := r.Node.Dag().Resolve(r.Ctx, arg)
	if err != nil {
		return err
	}
	st, err := r.Node.UnixFS().Stat(r.Ctx, res.Node)
	if err != nil {
		return err
	}
	e.SetLength(st.Size)
	archive := r.Bool("archive")
	if !archive && level != gzip.NoCompression {
		// A bare gzip of the content: files only.
		if st.Kind == node.EntryDir {
			return errors.New("file is not regular")
		}
		gz, err := gzip.NewWriterLevel(e, level)
		if err != nil {
			return err
		}
		if st.Kind == node.EntrySymlink {
			_, err = io.WriteString(gz, st.Target)
		} else {
			err = r.Node.UnixFS().WriteFile(r.Ctx, res.Cid, 0, -1, gz)
		}
		if err != nil {
			return err
		}
		return gz.Close()
	}
	var out io.Writer = e
	var gz *gzip.Writer
	if level != gzip.NoCompression {
		if gz, err = gzip.NewWriterLevel(e, level); err != nil {
			return err
		}
		out = gz
	}
	format := tar.FormatPAX // keeps sub-second mtimes
	if archive {
		format = tar.FormatUnknown
	}
	tw := tar.NewWriter(out)
	if err := r.Node.UnixFS().WriteTar(r.Ctx, tw, res.Node, getEntryName(arg), format); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if gz != nil {
		return gz.Close()
	}
	return nil
}

// GetOutput is the CLI side of get: with --archive or --compress it saves
// the stream as <output>[.tar][.gz] ("Saving archive to X"), otherwise it
// extracts the tar into <output> ("Saving file(s) to X"). <output>
// defaults to the last component of the argument.
func GetOutput(r *rpc.Request, body io.Reader, stdout io.Writer) error {
	level, err := getCompression(r)
	if err != nil {
		return err
	}
	out := r.String("output")
	if out == "" && len(r.Args) > 0 {
		_, out = filepath.Split(strings.TrimRight(r.Args[0], "/"))
		out = filepath.Clean(out)
	}
	if out == "" {
		return errors.New("get: no output path")
	}
	archive := r.Bool("archive")
	if !archive && level == gzip.NoCompression {
		fmt.Fprintf(stdout, "Saving file(s) to %s\n", out)
		return extractTar(body, out)
	}
	if archive && !strings.HasSuffix(out, ".tar") && !strings.HasSuffix(out, ".tar.gz") {
		out += ".tar"
	}
	if level != gzip.NoCompression && !strings.HasSuffix(out, ".gz") {
		out += ".gz"
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Saving archive to %s\n", out)
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Extraction errors (Kubo's texts where it has one).
var (
	errTarRoot        = errors.New("tar has invalid root")
	errTarMultiRoot   = fmt.Errorf("contains more than one root or the root directory is not the first entry : %w", errTarRoot)
	errTraverseLink   = errors.New("cannot traverse symlinks")
	errExtractToLink  = errors.New("cannot extract to symlink")
	errTraverseNonDir = errors.New("cannot traverse non-directory objects")
)

// extractTar unpacks a tar holding one file or symlink, or one directory
// with everything below it, at out. A single file or symlink goes to out,
// or into out when out is an existing directory. Names are checked before
// anything is written: absolute names, "..", entries outside the root and
// paths through symlinks or files are refused; links are created as
// links and never followed. Directory modes and times are applied last,
// deepest first.
func extractTar(r io.Reader, out string) error {
	if out == os.DevNull {
		_, err := io.Copy(io.Discard, r)
		return err
	}
	if strings.ContainsRune(out, 0) {
		return fmt.Errorf("invalid platform path: path components cannot contain null: %q", out)
	}
	tr := tar.NewReader(r)
	h, err := tr.Next()
	if err == io.EOF {
		return errors.New("empty tar file")
	}
	if err != nil {
		return err
	}
	rootName := h.Name
	if strings.Contains(rootName, "/") {
		return fmt.Errorf("root name contains multiple components : %q : %w", rootName, errTarRoot)
	}
	switch rootName {
	case "", ".", "..":
		return fmt.Errorf("invalid root path: %q : %w", rootName, errTarRoot)
	}
	if strings.ContainsRune(rootName, 0) {
		return fmt.Errorf("invalid root path: %q : %w", rootName, errTarRoot)
	}
	root := filepath.Clean(out)
	x := &extractor{}
	err = x.run(tr, h, root, rootName)
	if derr := x.applyDirs(); err == nil {
		err = derr
	}
	return err
}

type dirMeta struct {
	path  string
	mode  int64
	mtime time.Time
}

type extractor struct {
	dirs []dirMeta
}

func (x *extractor) run(tr *tar.Reader, h *tar.Header, root, rootName string) error {
	switch h.Typeflag {
	case tar.TypeDir:
		if err := x.dir(root, h); err != nil {
			return err
		}
	case tar.TypeReg, tar.TypeSymlink:
		target := root
		if fi, err := os.Lstat(root); err == nil && fi.IsDir() {
			target = filepath.Join(root, rootName)
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if err := x.leaf(target, h, tr); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unrecognized tar header type: %d", h.Typeflag)
	}
	rootIsDir := h.Typeflag == tar.TypeDir
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !rootIsDir {
			return fmt.Errorf("the root was not a directory and the tar has multiple entries: %w", errTarRoot)
		}
		p, err := entryPath(root, rootName, h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = x.dir(p, h)
		case tar.TypeReg, tar.TypeSymlink:
			err = x.leaf(p, h, tr)
		default:
			err = fmt.Errorf("unrecognized tar header type: %d", h.Typeflag)
		}
		if err != nil {
			return err
		}
	}
}

// entryPath maps a tar name below rootName to a path below root. Every
// parent on the way must already exist as a real directory (not a
// symlink), so nothing can be written outside root.
func entryPath(root, rootName, name string) (string, error) {
	if name == "" {
		return "", errors.New("path is empty")
	}
	if name[0] == '/' {
		return "", fmt.Errorf("%q : path starts with '/'", name)
	}
	for _, el := range strings.Split(name, "/") {
		switch el {
		case "", ".", "..":
			return "", fmt.Errorf("%q : path contains %q", name, el)
		}
		if strings.ContainsRune(el, 0) {
			return "", fmt.Errorf("invalid platform path: path components cannot contain null: %q", name)
		}
	}
	rel, ok := strings.CutPrefix(name, rootName+"/")
	if !ok {
		return "", errTarMultiRoot
	}
	p := root
	els := strings.Split(rel, "/")
	for i, el := range els {
		p = filepath.Join(p, el)
		if i == len(els)-1 {
			break
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return "", errTraverseLink
		}
		if !fi.IsDir() {
			return "", errTraverseNonDir
		}
	}
	return p, nil
}

// dir creates a directory (or accepts an existing one that is not a
// symlink); its mode and time are applied at the end.
func (x *extractor) dir(p string, h *tar.Header) error {
	if err := os.MkdirAll(p, 0o755); err != nil {
		return err
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errExtractToLink
	}
	x.dirs = append(x.dirs, dirMeta{path: p, mode: h.Mode, mtime: h.ModTime})
	return nil
}

// leaf writes a regular file (through a temporary file renamed into
// place) or creates a symlink, replacing a file, link or empty directory
// already at p.
func (x *extractor) leaf(p string, h *tar.Header, r io.Reader) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if h.Typeflag == tar.TypeSymlink {
		if err := os.Symlink(h.Linkname, p); err != nil {
			return err
		}
		return setLinkTime(p, h.ModTime)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".cairn-get-*")
	if err != nil {
		return err
	}
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return setMeta(p, h.Mode, h.ModTime)
}

// applyDirs sets directory modes and times, children before parents (so
// a read-only parent does not block its children, and setting a child's
// time does not touch its parent's afterwards).
func (x *extractor) applyDirs() error {
	var first error
	for i := len(x.dirs) - 1; i >= 0; i-- {
		d := x.dirs[i]
		if err := setMeta(d.path, d.mode, d.mtime); err != nil && first == nil {
			first = err
		}
	}
	x.dirs = nil
	return first
}

// setMeta applies a tar mode (permission and sticky bits; setuid and
// setgid are dropped) and modification time.
func setMeta(p string, mode int64, mtime time.Time) error {
	if perm := os.FileMode(mode & 0o777); perm != 0 || mode&0o1000 != 0 {
		if mode&0o1000 != 0 {
			perm |= os.ModeSticky
		}
		if err := os.Chmod(p, perm); err != nil {
			return err
		}
	}
	if !mtime.IsZero() {
		return os.Chtimes(p, mtime, mtime)
	}
	return nil
}

// setLinkTime sets a symlink's own modification time.
func setLinkTime(p string, mtime time.Time) error {
	if mtime.IsZero() {
		return nil
	}
	ts := unix.NsecToTimespec(mtime.UnixNano())
	return unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
}
