package modapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"time"

	"cairn/modules/events"
	"cairn/modules/httpapp"

	"github.com/valyala/fasthttp"
)

// NodeView is the narrow view of the IPFS node that modules get. Paths
// are /ipfs/<cid>[/sub] (or <cid>[/sub]). Add and Pin fail with
// ErrReadOnly unless the module is allowed to write (Modules.AllowWrite).
type NodeView interface {
	// ID is the node's peer ID.
	ID() string
	// Stat resolves p through UnixFS directories.
	Stat(ctx context.Context, p string) (Entry, error)
	// List returns the entries of the directory at p.
	List(ctx context.Context, p string) ([]Entry, error)
	// Cat writes the UnixFS file at p to w.
	Cat(ctx context.Context, p string, w io.Writer) error
	// Add imports r as one file (pinned, as Kubo's add does) and returns
	// its CID.
	Add(ctx context.Context, name string, r io.Reader) (string, error)
	// Pin pins the DAG under p recursively.
	Pin(ctx context.Context, p string) error
	// Repo reports storage use.
	Repo(ctx context.Context) (RepoStat, error)
	// Peers is the number of connected peers (0 when the daemon runs
	// offline).
	Peers() int
	// Bandwidth returns per-minute traffic samples of the last hour,
	// oldest first (empty when the daemon runs offline).
	Bandwidth() []BandwidthSample
	// Networking reports whether the node has a network layer at all.
	Networking() bool
	// Memory reports the memory budget and what the node holds of it.
	Memory() MemoryStat
}

// Entry is a resolved UnixFS node.
type Entry struct {
	Name  string
	Cid   string
	IsDir bool
	Size  int64 // file size; 0 for directories
}

// RepoStat is the storage use and flash wear the status app shows (the
// figures of the node's metrics, node.Vitals).
type RepoStat struct {
	UsedBytes  int64 // what Datastore.StorageMax counts (node's Storage().Usage)
	BlockBytes int64 // sum of block sizes
	NumBlocks  int64
	StorageMax int64 // 0: not set
	Pins       int   // recursive + direct pins
	// WrittenBytes is what the store wrote to its file since the daemon
	// started, LifetimeWrittenBytes over the file's life (flash wear).
	WrittenBytes, LifetimeWrittenBytes int64
	// Fault says why the store cannot write (a read-only file system, a
	// full disk), "" when it can.
	Fault string
}

// MemoryStat is the memory budget (Budget.MemoryMiB) and the memory the
// Go runtime holds from the system (node.Vitals).
type MemoryStat struct {
	Budget   int64 // 0: no budget
	Used     int64
	Headroom int64 // Budget less Used (negative: over); 0 without a budget
}

// BandwidthSample is the traffic of one minute.
type BandwidthSample struct {
	Time     time.Time
	BytesIn  int64
	BytesOut int64
}

// ErrReadOnly is returned by Add and Pin on a read-only view.
var ErrReadOnly = errors.New("the node is read-only for this module (see Modules.AllowWrite)")

// ReadOnly wraps v so that Add and Pin fail with ErrReadOnly.
func ReadOnly(v NodeView) NodeView { return readOnly{v} }

type readOnly struct{ NodeView }

func (readOnly) Add(context.Context, string, io.Reader) (string, error) { return "", ErrReadOnly }
func (readOnly) Pin(context.Context, string) error                      { return ErrReadOnly }

// Settings is the module section of the config as modules need it; the
// host fills it from config.ModulesConfig.
type Settings struct {
	Repo       string // repo directory
	ModulesDir string // where mod_<name>.lua files are looked up
	Version    string // cairn version, for footers
	// GatewayPort is the port of the node's HTTP gateway ("" when none
	// listens), for links to it on the host a page was opened with.
	GatewayPort string
	// Gateway answers a request for a content path (/ipfs/..., /ipns/...)
	// as the node's HTTP gateway does (gateway.Server.ServePath; nil when
	// the host was given none): http_ipfs serves through it.
	Gateway func(c *fasthttp.RequestCtx, contentPath string)
	// Files is the http_files app's folder or /ipfs/ path.
	FilesPath  string
	DirListing bool
	IndexFiles []string
	// Lua limits per handler call / module load.
	LuaMaxRunTime time.Duration
	LuaMaxMemory  int64
	// MaxUploadSize caps streamed uploads (status app).
	MaxUploadSize int64
	// Options holds free-form options per module name.
	Options map[string]map[string]any
}

// Module is a loadable module.
type Module interface {
	// Load publishes what the module provides. An error means the module
	// failed: the host logs it, withdraws anything it provided, and goes
	// on with the other modules.
	Load(ctx *Context) error
}

// Usage is what a module's code took against its caps since it loaded:
// every call (load, handler, hook, timer) runs under MaxRunTime and
// MaxMemory, and one that passes either is stopped.
type Usage struct {
	MaxRunTime time.Duration
	MaxMemory  int64
	Calls      uint64
	CallTime   time.Duration // summed over the calls
	TimeStops  uint64        // calls stopped at MaxRunTime
	MemStops   uint64        // calls stopped at MaxMemory
	// PeakMemory is the most the heap grew during one call, as the
	// memory cap measures it (sampled while the call runs and at its
	// end; garbage counts until a collection).
	PeakMemory int64
}

// UsageReporter is implemented by modules whose code runs under caps
// (Lua modules).
type UsageReporter interface{ Usage() Usage }

// Unloader is implemented by modules that hold resources.
type Unloader interface{ Unload() error }

// Context is a module's handle on the host while it loads.
type Context struct {
	Name     string // internal module name, e.g. "http_files"
	Node     NodeView
	Settings *Settings
	Log      *slog.Logger
	// Events are the module events (module:hook, module:fire_event;
	// Prosody's prosody.events), HTTPEvents the HTTP server's
	// (http-error, directory-index). The host unhooks a module's
	// handlers from both when it unloads.
	Events     *events.Bus
	HTTPEvents *events.Bus
	// Shared holds module:shared tables, which outlive module states.
	Shared *Shared
	// provide mounts an http app; depends loads another module.
	ProvideFunc func(app *httpapp.App) (httpapp.AppInfo, error)
	DependsFunc func(name string) error
	// URLFunc returns the external URL of a base path.
	URLFunc func(base string) string
	// AppsFunc lists the mounted apps.
	AppsFunc func() []httpapp.AppInfo
}

// Provide publishes an http app of this module (Prosody's
// module:provides("http", ...)). Module is set to the context's name.
func (c *Context) Provide(app *httpapp.App) (httpapp.AppInfo, error) {
	app.Module = c.Name
	return c.ProvideFunc(app)
}

// Depends makes sure another module is loaded ("http" is always there).
func (c *Context) Depends(name string) error {
	if name == "http" {
		return nil
	}
	return c.DependsFunc(name)
}

// Option returns the module's option key from Settings.Options.
func (c *Context) Option(key string) (any, bool) {
	v, ok := c.Settings.Options[c.Name][key]
	return v, ok
}

// Info registers a built-in module.
type Info struct {
	Name string // internal name: "http_files"
	New  func() Module
}

var (
	regMu    sync.Mutex
	registry = map[string]Info{}
)

// CheckName accepts module names as Prosody spells them: letters, digits,
// "_" and "-". A name is never a path: "../x" or "a/b" could otherwise
// name a Lua file outside Modules.Dir.
func CheckName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("invalid module name %q: want 1 to 64 letters, digits, _ or -", name)
	}
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("invalid module name %q: only letters, digits, _ and - are allowed", name)
		}
	}
	return nil
}

// Register adds a built-in module; it fails on an invalid or duplicate name.
func Register(i Info) error {
	regMu.Lock()
	defer regMu.Unlock()
	if i.New == nil {
		return errors.New("modapi: module needs a name and a constructor")
	}
	if err := CheckName(i.Name); err != nil {
		return fmt.Errorf("modapi: %w", err)
	}
	if _, dup := registry[i.Name]; dup {
		return fmt.Errorf("modapi: module %s registered twice", i.Name)
	}
	registry[i.Name] = i
	return nil
}

// MustRegister is Register for init functions.
func MustRegister(i Info) {
	if err := Register(i); err != nil {
		panic(err)
	}
}

// Lookup finds a built-in module.
func Lookup(name string) (Info, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	i, ok := registry[name]
	return i, ok
}

// Builtins lists the registered names, sorted.
func Builtins() []string {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// DirectoryIndex is the data of the HTTP server's "directory-index"
// event: a hook that returns a string supplies the listing page.
type DirectoryIndex struct {
	Path     string // decoded URL path of the directory, ending in "/"
	FullPath string // filesystem directory ending in "/", or its /ipfs/ path
	Entries  []Entry
}

// EventDirectoryIndex is the name of that event.
const EventDirectoryIndex = "directory-index"
