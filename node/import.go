// import.go: the import settings (CID version, hash, raw leaves, chunker,
// file and directory layout) of add and of MFS, resolved in one place: an
// add's options first, then the config's Import section, then Kubo's
// defaults.

package node

import (
	"errors"
	"fmt"
	"strings"

	"cairn/node/config"

	chunker "github.com/ipfs/boxo/chunker"
	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/boxo/ipld/unixfs/importer/helpers"
	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/boxo/mfs"
	"github.com/ipfs/go-cid"
	"github.com/ipfs/go-cidutil"
	mh "github.com/multiformats/go-multihash"
)

// Kubo's import defaults.
const (
	defaultHashFunction = "sha2-256"
	defaultChunker      = "size-262144"
	defaultHAMTFanout   = 256
	defaultHAMTSize     = 256 << 10
)

// importSettings are the resolved import settings.
type importSettings struct {
	// prefix is the CID version and hash; builder is prefix, or an
	// inlining builder around it (add --inline).
	prefix  cid.Prefix
	builder cid.Builder
	// rawLeaves stores file leaves as raw blocks.
	rawLeaves bool
	// maxLinks is the links per file node; chunker the splitter spec.
	maxLinks int
	chunker  string
	// dirMaxLinks is where a plain directory becomes a HAMT (0: by size
	// only); fanout is the HAMT's width, hamtSize the size threshold and
	// estimation how the size is estimated.
	dirMaxLinks int
	fanout      int
	hamtSize    int
	estimation  uio.SizeEstimationMode
}

// resolveImport resolves the import settings of imp and an add's options
// o. o is nil for the files commands (MFS), which take only the config:
// as Kubo's UnixFSCidBuilder there, a hash other than sha2-256 moves an
// Import.CidVersion of 0 to CIDv1, where add refuses the pair as Kubo's add
// does. Hash names are matched case-insensitively, as Kubo matches them.
func resolveImport(imp config.Import, o *AddOptions) (*importSettings, error) {
	mfsOnly := o == nil
	if mfsOnly {
		o = &AddOptions{}
	}
	st := &importSettings{}

	hashName, hashFromConfig := defaultHashFunction, false
	if h := imp.HashFunction.WithDefault(""); h != "" {
		hashName, hashFromConfig = h, true
	}
	if o.Hash != "" {
		hashName, hashFromConfig = o.Hash, false
	}
	code, ok := mh.Names[strings.ToLower(hashName)]
	if !ok {
		if hashFromConfig {
			return nil, fmt.Errorf("Import.HashFunction unrecognized: %q", hashName)
		}
		return nil, fmt.Errorf("unrecognized hash function: %q", strings.ToLower(hashName))
	}
	cidVer := 0
	if !imp.CidVersion.IsDefault() {
		cidVer = int(imp.CidVersion.WithDefault(0))
	}
	switch {
	case o.CidVersion != nil:
		cidVer = *o.CidVersion
	case code != mh.SHA2_256 && (imp.CidVersion.IsDefault() || mfsOnly && cidVer == 0):
		cidVer = 1
	}
	if cidVer != 0 && cidVer != 1 {
		return nil, fmt.Errorf("unknown CID version: %d", cidVer)
	}
	if cidVer == 0 && code != mh.SHA2_256 {
		return nil, errors.New("CIDv0 only supports sha2-256")
	}
	var err error
	if st.rawLeaves, err = resolveRawLeaves(imp, o, cidVer); err != nil {
		return nil, err
	}

	prefix, err := merkledag.PrefixForCidVersion(cidVer)
	if err != nil {
		return nil, err
	}
	prefix.MhType = code
	prefix.MhLength = -1
	st.prefix, st.builder = prefix, prefix
	if o.Inline {
		if o.InlineLimit > 128 {
			return nil, fmt.Errorf("inline-limit %d exceeds maximum allowed size of 128 bytes", o.InlineLimit)
		}
		st.builder = cidutil.InlineBuilder{Builder: prefix, Limit: o.InlineLimit}
	}

	st.maxLinks = helpers.DefaultLinksPerBlock
	if v := imp.UnixFSFileMaxLinks.WithDefault(0); v > 0 {
		st.maxLinks = int(v)
	}
	if o.MaxLinks > 0 {
		st.maxLinks = o.MaxLinks
	}
	if st.maxLinks < 2 {
		// A file node of one link never reaches its data: the balanced
		// layout would stack nodes forever.
		return nil, fmt.Errorf("max-file-links must be at least 2, got %d", st.maxLinks)
	}

	st.chunker = defaultChunker
	if c := imp.UnixFSChunker.WithDefault(""); c != "" {
		st.chunker = c
	}
	if o.Chunker != "" {
		st.chunker = o.Chunker
	}
	if _, err := chunker.FromString(strings.NewReader(""), st.chunker); err != nil {
		return nil, err
	}

	if !imp.UnixFSDirectoryMaxLinks.IsDefault() {
		st.dirMaxLinks = int(imp.UnixFSDirectoryMaxLinks.WithDefault(0))
	}
	if o.MaxDirLinks > 0 {
		st.dirMaxLinks = o.MaxDirLinks
	}
	st.fanout = defaultHAMTFanout
	if v := imp.UnixFSHAMTDirectoryMaxFanout.WithDefault(0); v > 0 {
		st.fanout = int(v)
	}
	if o.MaxHAMTFanout > 0 {
		st.fanout = o.MaxHAMTFanout
	}
	if f := st.fanout; f < 8 || f > 1024 || f&(f-1) != 0 {
		return nil, fmt.Errorf("HAMT fanout must be a power of 2, between 8 and 1024 (got %d)", f)
	}
	est := imp.UnixFSHAMTDirectorySizeEstimation.WithDefault("")
	if st.estimation, err = ParseSizeEstimation(est); err != nil {
		return nil, err
	}
	if l := imp.UnixFSDAGLayout.WithDefault("balanced"); l != "balanced" && l != "trickle" {
		return nil, fmt.Errorf("Import.UnixFSDAGLayout must be %q or %q, got %q", "balanced", "trickle", l)
	}
	st.hamtSize = defaultHAMTSize
	if t := imp.UnixFSHAMTDirectorySizeThreshold.WithDefault(""); t != "" {
		v, err := config.ParseSize("Import.UnixFSHAMTDirectorySizeThreshold", t)
		if err != nil {
			return nil, err
		}
		st.hamtSize = int(v)
	}
	return st, nil
}

// resolveRawLeaves is Kubo's raw-leaves rule: on by default with CIDv1,
// the config's Import.UnixFSRawLeaves then --raw-leaves override it,
// --nocopy needs it and UnixFS metadata (mode, mtime) rules it out.
func resolveRawLeaves(imp config.Import, o *AddOptions, cidVer int) (bool, error) {
	raw := cidVer > 0
	if imp.UnixFSRawLeaves != config.Default {
		raw = imp.UnixFSRawLeaves == config.True
	}
	if o.RawLeaves != nil {
		raw = *o.RawLeaves
	}
	rawSet := o.RawLeaves != nil || imp.UnixFSRawLeaves != config.Default
	if o.NoCopy && !raw {
		if rawSet {
			return false, errors.New("nocopy option requires '--raw-leaves' to be enabled as well")
		}
		raw = true
	}
	if o.PreserveMode || o.PreserveMtime || o.Mode != 0 || !o.Mtime.IsZero() {
		if raw && rawSet {
			return false, errors.New("raw-leaves can't be used with UnixFS metadata like mode or modification time")
		}
		raw = false
	}
	return raw, nil
}

// dirOptions are the settings of a directory built by add.
func (st *importSettings) dirOptions() []uio.DirectoryOption {
	return []uio.DirectoryOption{
		uio.WithCidBuilder(st.builder),
		uio.WithMaxLinks(st.dirMaxLinks),
		uio.WithMaxHAMTFanout(st.fanout),
		uio.WithSizeEstimationMode(st.estimation),
	}
}

// ParseSizeEstimation maps Kubo's Import.UnixFSHAMTDirectorySizeEstimation.
func ParseSizeEstimation(s string) (uio.SizeEstimationMode, error) {
	switch s {
	case "", "links":
		return uio.SizeEstimationLinks, nil
	case "block":
		return uio.SizeEstimationBlock, nil
	case "disabled":
		return uio.SizeEstimationDisabled, nil
	}
	return 0, fmt.Errorf("invalid HAMT size estimation %q (want links, block or disabled)", s)
}

// CidBuilder is the CID builder of Import.CidVersion and
// Import.HashFunction (Kubo's UnixFSCidBuilder): a hash other than
// sha2-256 implies CIDv1.
func (u *UnixFS) CidBuilder() (cid.Builder, error) {
	n := u.n
	st, err := resolveImport(n.Config().ImportSettings(), nil)
	if err != nil {
		return nil, err
	}
	return &st.prefix, nil
}

// DirOptions are the directory settings of Import that Kubo's files
// commands pass when they create directories.
func (u *UnixFS) DirOptions(builder cid.Builder) ([]mfs.Option, error) {
	n := u.n
	st, err := resolveImport(n.Config().ImportSettings(), nil)
	if err != nil {
		return nil, err
	}
	return []mfs.Option{mfs.WithCidBuilder(builder), mfs.WithMaxLinks(st.dirMaxLinks),
		mfs.WithSizeEstimationMode(st.estimation)}, nil
}

// mfsRootOptions are Kubo's MFSRootOptions: builder, chunker and
// directory shape from Import.
func (n *Node) mfsRootOptions() ([]mfs.Option, error) {
	st, err := resolveImport(n.Config().ImportSettings(), nil)
	if err != nil {
		return nil, err
	}
	return []mfs.Option{
		mfs.WithCidBuilder(&st.prefix),
		mfs.WithMaxLinks(st.dirMaxLinks),
		mfs.WithSizeEstimationMode(st.estimation),
		mfs.WithChunker(splitterGen(st.chunker)),
		mfs.WithMaxHAMTFanout(st.fanout),
		mfs.WithHAMTShardingSize(st.hamtSize),
	}, nil
}
