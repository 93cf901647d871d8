// daemon.go: "cairn init" and "cairn daemon".

package main

import (
	"cairn/gateway"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"cairn/board"
	"cairn/commands"
	"cairn/internal/memtarget"
	"cairn/internal/slogbridge"
	"cairn/modules"
	"cairn/node"
	"cairn/node/config"
	"cairn/node/p2p"
	"cairn/rpc"
	"cairn/storage"

	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
	"github.com/prometheus/client_golang/prometheus"
)

func cmdInit(argv []string, stdout, stderr io.Writer) int {
	inv, req, done, code := parseCLI(append([]string{"init"}, argv...), stdout, stderr)
	if done {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	boardName, storageMax := req.String("board"), req.String("storage-max")
	budget := int(req.Int("budget"))
	if boardName == "list" {
		listBoards(stdout)
		return 0
	}
	if len(inv.args) > 1 {
		return fail(fmt.Errorf("init takes at most one argument (a config file), got %d", len(inv.args)))
	}
	dir := repoPath(inv)
	o := node.InitOptions{Profiles: req.String("profile"), Algorithm: req.String("algorithm"), Bits: int(req.Int("bits"))}
	if len(inv.args) == 1 {
		doc, err := readConfigFile(inv.args[0])
		if err != nil {
			return fail(err)
		}
		o.Doc = doc
	}
	var plan *boardPlan
	if boardName != "" || budget != 0 || storageMax != "" {
		if node.IsInitialized(dir) {
			fmt.Fprintf(stderr, "Error: cairn configuration file already exists!\nReinitializing would overwrite your keys (%s)\n", filepath.Join(dir, config.File))
			return 1
		}
		var err error
		if plan, err = planBoard(dir, boardName, budget, storageMax); err != nil {
			return fail(err)
		}
	}
	fmt.Fprintf(stdout, "initializing cairn node at %s\n", dir)
	cfg, err := node.InitRepo(dir, o)
	if err != nil {
		return fail(err)
	}
	if o.Doc == nil {
		if strings.EqualFold(o.Algorithm, "rsa") {
			bits := max(o.Bits, 0)
			if bits == 0 {
				bits = 2048
			}
			fmt.Fprintf(stdout, "generating %d-bit RSA keypair...done\n", bits)
		} else {
			fmt.Fprintf(stdout, "generating ED25519 keypair...done\n")
		}
	}
	fmt.Fprintf(stdout, "peer identity: %s\n", cfg.Identity.PeerID)
	if _, err := modules.EnsureCert(dir, cfg.Modules); err != nil {
		fmt.Fprintf(stderr, "WARNING: modules HTTPS certificate: %v\n", err)
	}
	if plan != nil {
		if err := plan.write(dir, cfg); err != nil {
			return fail(fmt.Errorf("writing the board profile: %w", err))
		}
		plan.print(stdout)
	}
	if err := seedRepo(dir, !req.Bool("empty-repo"), stdout); err != nil {
		return fail(err)
	}
	return 0
}

// readConfigFile reads the config file of `cairn init <default-config>`.
func readConfigFile(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	if doc == nil {
		return nil, fmt.Errorf("config file %s: not a JSON object", path)
	}
	return doc, nil
}

// seedRepo opens the new repo at dir and seeds it as Kubo's init does: the
// welcome documents if asked (their banner goes to stdout), then the empty
// directory pinned and the node's own name published to it.
func seedRepo(dir string, welcome bool, stdout io.Writer) (err error) {
	ctx := context.Background()
	n, err := node.New(dir, nil)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := n.Close(); err == nil {
			err = cerr
		}
	}()
	if welcome {
		c, err := n.UnixFS().AddWelcomeDocs(ctx)
		if err != nil {
			return fmt.Errorf("init: seeding init docs failed: %w", err)
		}
		fmt.Fprintf(stdout, "to get started, enter:\n\n\tcairn cat /ipfs/%s/readme\n\n", c)
	}
	if err := n.PinEmptyDir(ctx); err != nil {
		return fmt.Errorf("init: pinning the empty directory: %w", err)
	}
	return nil
}

// boardPlan is what init --board writes: a profile, its limits and a
// StorageMax that fits the disk.
type boardPlan struct {
	profile    board.Profile
	why        string // how the profile was chosen
	limits     board.Budget
	net        p2p.Limits // what the network layer derives from the budget
	storageMax int64
	storageWhy string
	note       string // the 32-bit index bound, if any
}

// boardRoot is the file system detection reads; CAIRN_BOARD_ROOT points it
// elsewhere (an image being prepared for another board, or a test).
func boardRoot() string {
	if r := os.Getenv("CAIRN_BOARD_ROOT"); r != "" {
		return r
	}
	return "/"
}

// planBoard checks everything init --board needs before the repo exists.
func planBoard(dir, name string, budgetMiB int, storageMax string) (*boardPlan, error) {
	det := board.Detect(os.DirFS(boardRoot()))
	p := &boardPlan{profile: det.Profile, why: "detected: " + det.Reason}
	memory := det.MemoryMiB
	if name != "" && name != "auto" {
		prof, err := board.Lookup(name)
		if err != nil {
			return nil, err
		}
		p.profile, p.why = prof, "chosen with --board"
		memory = board.BudgetFor(prof, det.MemTotalMiB)
	}
	if budgetMiB != 0 {
		memory = budgetMiB
	}
	lim, err := board.Derive(memory)
	if err != nil {
		return nil, err
	}
	lim.Board = p.profile.Name
	probe := &config.Config{Budget: lim}
	if p.net, err = node.NetLimitsOf(probe); err != nil {
		return nil, err
	}
	p.limits = lim
	disk, err := statDisk(dir)
	if err != nil {
		return nil, err
	}
	if storageMax != "" {
		n, err := config.ParseStorageMax(storageMax)
		if err != nil {
			return nil, fmt.Errorf("--storage-max: %w", err)
		}
		if err := board.CheckStorage(int64(n), disk); err != nil {
			return nil, err
		}
		p.storageMax, p.storageWhy = int64(n), "chosen with --storage-max"
		return p, nil
	}
	if p.storageMax, err = board.FitStorage(disk); err != nil {
		return nil, err
	}
	if board.WordBits == 32 || p.profile.Only32Bit {
		p.note = fmt.Sprintf("32-bit ARM: the block index may take %d MiB (about 10 million blocks), "+
			"what a 32-bit memory map fits; Datastore.StorageMax is not capped; the arm64 build on a "+
			"64-bit OS has no such bound", storage.DefaultMaxIndexBytes32>>20)
	}
	p.storageWhy = fmt.Sprintf("90%% of the %s the disk offers", board.FormatSize(disk.Avail()))
	return p, nil
}

// write stores the plan in the new repo's config.
func (p *boardPlan) write(dir string, cfg *config.Config) error {
	cfg.Budget = p.limits
	// Written out so that the config shows them; the network layer would
	// derive the same from Budget.MemoryMiB.
	cfg.Swarm.ConnMgr.LowWater = config.NewOptionalInteger(int64(p.net.LowWater))
	cfg.Swarm.ConnMgr.HighWater = config.NewOptionalInteger(int64(p.net.HighWater))
	cfg.Routing.Type = config.NewOptionalString("dhtclient")
	cfg.Datastore.StorageMax = board.FormatSize(p.storageMax)
	return config.NewStore(dir, nil).WriteConfig(cfg)
}

func (p *boardPlan) print(w io.Writer) {
	fmt.Fprintf(w, "board: %s, %s (%s)\n", p.profile.Name, p.profile.Description, p.why)
	fmt.Fprintf(w, "memory: %s\n", p.limits)
	fmt.Fprintf(w, "network: connections %d/%d, bitswap %d+%d+%d workers, %d wants per peer, %d KiB queued per peer\n",
		p.net.LowWater, p.net.HighWater, p.net.TaskWorkers, p.net.EngineTaskWorkers, p.net.EngineBlockstoreWorkers,
		p.net.MaxWantlistPerPeer, p.net.MaxOutstandingBytes>>10)
	fmt.Fprintf(w, "storage: Datastore.StorageMax %s (%s)\n", board.FormatSize(p.storageMax), p.storageWhy)
	if p.note != "" {
		fmt.Fprintf(w, "note: %s\n", p.note)
	}
}

func listBoards(w io.Writer) {
	fmt.Fprintf(w, "%-11s %7s %7s  %s\n", "BOARD", "RAM", "BUDGET", "FOR")
	for _, p := range board.Profiles() {
		ram, budget := "-", "MemTotal/2"
		if p.RAMMiB > 0 {
			ram, budget = fmt.Sprintf("%dM", p.RAMMiB), fmt.Sprintf("%dM", p.MemoryMiB)
		}
		fmt.Fprintf(w, "%-11s %7s %7s  %s\n", p.Name, ram, budget, p.Description)
	}
	det := board.Detect(os.DirFS(boardRoot()))
	fmt.Fprintf(w, "\nthis machine: %s (%s)\n", det.Profile.Name, det.Reason)
}

func cmdDaemon(argv []string, stdout, stderr io.Writer) int {
	inv, req, done, code := parseCLI(append([]string{"daemon"}, argv...), stdout, stderr)
	if done {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	if len(inv.args) > 0 {
		return fail(fmt.Errorf("daemon takes no arguments, got %q", inv.args))
	}
	o, err := daemonFlags(req)
	if err != nil {
		return fail(err)
	}
	if _, set := inv.opts["enable-mplex-experiment"]; set {
		fmt.Fprintf(stderr, "WARNING: --enable-mplex-experiment was removed from Kubo and does nothing; cairn uses yamux\n")
	}
	dir := repoPath(inv)
	if req.Bool("init") && !node.IsInitialized(dir) {
		iopts := node.InitOptions{Profiles: req.String("init-profile")}
		if p := req.String("init-config"); p != "" {
			if iopts.Doc, err = readConfigFile(p); err != nil {
				return fail(err)
			}
		}
		if _, err := node.InitRepo(dir, iopts); err != nil {
			return fail(err)
		}
		if err := seedRepo(dir, false, stdout); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "initialized cairn repo at %s\n", dir)
	}
	if err := runDaemon(dir, o, stdout, stderr); err != nil {
		return fail(err)
	}
	return 0
}

// daemonOptions are the daemon's flags that change how it runs.
type daemonOptions struct {
	offline, enableGC bool
	pubsub            bool   // --enable-pubsub-experiment
	ipnsPubsub        bool   // --enable-namesys-pubsub
	routing           string // "" or a Routing.Type override
	agentSuffix       string
	mount             bool
	req               *rpc.Request // the flags, for --mount-ipfs and --mount-ipns
}

// daemonFlags checks the daemon's flags (Kubo 0.42's set): the ones that
// need what cairn does not have are refused with a message naming it.
func daemonFlags(req *rpc.Request) (daemonOptions, error) {
	o := daemonOptions{offline: req.Bool("offline"), enableGC: req.Bool("enable-gc"), agentSuffix: req.String("agent-version-suffix"),
		pubsub: req.Bool("enable-pubsub-experiment"), ipnsPubsub: req.Bool("enable-namesys-pubsub"), mount: req.Bool("mount"), req: req}
	if o.mount && o.offline {
		return o, errors.New("mount is not currently supported in offline mode")
	}
	if o.mount && req.String("mount-mfs") != "" {
		return o, errors.New("--mount-mfs: cairn mounts no MFS (only /ipfs and /ipns)")
	}
	for _, f := range []struct{ flag, why string }{
		{"disable-transport-encryption", "cairn always encrypts transports (Noise or TLS)"},
		{"writable", "the writable gateway was removed from Kubo, and cairn serves no gateway"},
	} {
		if req.Bool(f.flag) {
			return o, fmt.Errorf("--%s: %s", f.flag, f.why)
		}
	}
	switch r := req.String("routing"); r {
	case "", "default":
	case "auto", "dht", "dhtclient", "dhtserver", "none":
		o.routing = r
	case "autoclient", "custom", "delegated", "supernode":
		return o, fmt.Errorf("--routing=%s is not supported by cairn (supported: default, auto, dht, dhtclient, dhtserver, none)", r)
	default:
		return o, fmt.Errorf("unrecognized routing option: %s", r)
	}
	return o, nil
}

// stopDeadline bounds a stop (SIGTERM, SIGINT or shutdown): past it the
// daemon exits without waiting further. systemd's TimeoutStopSec is longer.
const stopDeadline = 9 * time.Second

// runDaemon serves the RPC until SIGINT/SIGTERM or /api/v0/shutdown.
func runDaemon(dir string, o daemonOptions, stdout, stderr io.Writer) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Signals are caught from the start: a SIGTERM that arrives once the
	// api file exists must still shut down cleanly.
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)
	fmt.Fprintf(stdout, "Initializing daemon...\ncairn version: %s\nRepo version: %s\n", node.Version, node.RepoVersion)
	if !node.IsInitialized(dir) {
		return fmt.Errorf("%w at %s: please run 'cairn init'", node.ErrNoRepo, dir)
	}
	doc, err := config.ReadDoc(dir)
	if err != nil {
		return err
	}
	cfg, err := config.Decode(doc)
	if err != nil {
		return err
	}
	if cfg.Internal.UnixFSShardingSizeThreshold != nil {
		fmt.Fprintf(stderr, "ERROR: %s\n", config.DeprecatedShardingThreshold)
	}
	// Everything that can refuse a start is checked before the repo is
	// opened and before anything listens.
	lim, err := budgetLimits(cfg)
	if err != nil {
		return err
	}
	if err := checkStorage(dir, cfg, lim != nil, stderr); err != nil {
		return err
	}
	apiAddrs, err := config.ParseAddrs("Addresses.API", cfg.Addresses.API)
	if err != nil {
		return err
	}
	for _, m := range apiAddrs {
		if err := checkAPIExposure(m, cfg.API); err != nil {
			return err
		}
	}
	if len(apiAddrs) == 0 {
		return errors.New("config Addresses.API is empty: nothing to serve the RPC on")
	}
	if err := modules.CheckExposure(cfg.Modules, rpc.NewAuth(cfg.API.Authorizations)); err != nil {
		return err
	}

	opts := &node.Options{CompactIfNeeded: true, Config: cfg,
		Log: func(f string, a ...any) { fmt.Fprintf(stdout, f+"\n", a...) }}
	modMetrics := &modules.Metrics{}
	srvOpts := rpc.ServerOptions{ServerHeader: "cairn/" + node.Version, Collectors: []prometheus.Collector{modMetrics}}
	// The runtime collects at a soft target that follows the live heap
	// (internal/memtarget), below the budget's GOMEMLIMIT.
	hardLimit := int64(0)
	target := board.MemTargetMiB(storage.DefaultMaxPendingBytes>>20, storage.DefaultMaxBatchBytes>>20)
	if lim != nil {
		fmt.Fprintf(stdout, "Board profile: %s\nMemory %s\n", cfg.Budget.Board, lim)
		hardLimit = int64(lim.GoMemLimitMiB) << 20
		target = board.MemTargetMiB(lim.StorePendingMiB, lim.StoreBatchMiB)
		opts.Store = &storage.Options{MaxBatchBytes: lim.StoreBatchMiB << 20, MaxPendingBytes: lim.StorePendingMiB << 20}
		srvOpts.Concurrency = lim.HTTPConcurrency
	}
	if env := os.Getenv("GOMEMLIMIT"); env != "" {
		if lim != nil {
			fmt.Fprintf(stdout, "GOMEMLIMIT=%s from the environment overrides Budget.GoMemLimitMiB\n", env)
		}
	} else {
		tu := memtarget.Start(int64(target)<<20, hardLimit)
		defer tu.Stop()
		srvOpts.AfterLong = tu.Settle // a long command's garbage goes back at its end
	}
	n, err := node.New(dir, opts)
	if err != nil {
		return err
	}
	defer n.Close()
	if o.enableGC {
		if err := startAutoGC(ctx, n, stderr); err != nil {
			return err
		}
	}
	if !o.offline {
		ua := node.AgentVersion()
		if o.agentSuffix != "" {
			ua += "/" + o.agentSuffix
		}
		if err := n.StartNet(ctx, node.NetOptions{UserAgent: ua, Routing: o.routing, Pubsub: o.pubsub, IpnsPubsub: o.ipnsPubsub}); err != nil {
			return err
		}
		for _, a := range n.Net.Host.Network().ListenAddresses() {
			fmt.Fprintf(stdout, "Swarm listening on %s\n", a)
		}
		fmt.Fprintf(stdout, "PeerID: %s\n", n.PeerID)
	}

	var listeners []manet.Listener
	closeAll := func() {
		for _, l := range listeners {
			l.Close()
		}
	}
	for _, m := range apiAddrs {
		l, err := manet.Listen(m)
		if err != nil {
			closeAll()
			return fmt.Errorf("serving RPC on %s: %w", m, err)
		}
		listeners = append(listeners, l)
	}
	gw, err := startGateway(n, o.offline, srvOpts.Concurrency)
	if err != nil {
		closeAll()
		return err
	}
	defer gw.close()
	if n.Config().API.AllowUnauthenticated && len(n.Config().API.Authorizations) == 0 {
		fmt.Fprintf(stderr, "WARNING: API.AllowUnauthenticated is true: anyone who can reach the RPC port can control this node\n")
	}

	stop := make(chan struct{})
	var once sync.Once
	var srv *rpc.Server
	// A shutdown request is answered, and no request after it (as Kubo).
	shutdown := func() { once.Do(func() { srv.Refuse(); close(stop) }) }
	mt := &mounter{n: n}
	defer mt.close()
	env := &rpc.Env{Table: commands.DefaultTable, Shutdown: shutdown, Mount: mt.mount}
	srv = rpc.NewServer(n, commands.DefaultTable, env, srvOpts)

	errc := make(chan error, len(listeners))
	for _, l := range listeners {
		fmt.Fprintf(stdout, "RPC API server listening on %s\n", l.Multiaddr())
		go func(l net.Listener) { errc <- srv.Serve(l) }(manet.NetListener(l))
	}
	gw.serve(stdout)
	if err := node.WriteAPIFile(dir, listeners[0].Multiaddr().String()); err != nil {
		closeAll()
		return err
	}
	defer node.RemoveAPIFile(dir)
	if o.mount {
		if err := mt.mountAtStart(o.req, stdout); err != nil {
			closeAll()
			return err
		}
	}
	mh, err := modules.Start(ctx, modules.ViewOf(n), n.Config().Modules, modules.Options{Repo: dir, Version: node.Version,
		Log: slogbridge.Logger("modules"), API: rpc.NewAuth(n.Config().API.Authorizations), MemoryMiB: n.Config().Budget.MemoryMiB,
		GatewayPort: gw.port(), Gateway: gw.srv.ServePath})
	if err != nil {
		fmt.Fprintf(stderr, "WARNING: modules not started: %v\n", err)
	}
	defer mh.Close()
	modMetrics.Attach(mh)
	for _, u := range mh.URLs() {
		fmt.Fprintf(stdout, "Module app %s\n", u)
	}
	fmt.Fprintf(stdout, "Daemon is ready\n")
	log.Infof("daemon ready: RPC on %s", listeners[0].Multiaddr())
	if err := sdNotify("READY=1\nSTATUS=serving the RPC on " + listeners[0].Multiaddr().String()); err != nil {
		fmt.Fprintf(stderr, "WARNING: telling systemd the daemon is ready: %v\n", err)
	}

	select {
	case s := <-sigc:
		fmt.Fprintf(stdout, "\nReceived %s, shutting down...\n", s)
	case <-stop:
		fmt.Fprintf(stdout, "Shutdown requested, shutting down...\n")
	case err := <-errc:
		if err != nil {
			fmt.Fprintf(stderr, "RPC server failed: %v\n", err)
		}
	}
	_ = sdNotify("STOPPING=1")
	log.Info("daemon stopping")
	deadline := time.AfterFunc(stopDeadline, func() {
		fmt.Fprintf(stderr, "Error: shutdown took longer than %s; exiting without waiting further\n", stopDeadline)
		os.Exit(1)
	})
	defer deadline.Stop()
	// Let the shutdown response reach its client before the listeners go.
	time.Sleep(50 * time.Millisecond)
	_ = srv.Shutdown(5 * time.Second)
	gw.close()
	closeAll()
	node.RemoveAPIFile(dir)
	mh.Close()
	mt.close()
	// Close stops the network and flushes the write queue, under the
	// deadline.
	if err := n.Close(); err != nil {
		return fmt.Errorf("closing the repo: %w", err)
	}
	return nil
}

// budgetLimits fills the config's Budget section from Budget.MemoryMiB
// and checks it; nil when the repo has no budget (no field set besides
// Board).
func budgetLimits(cfg *config.Config) (*board.Budget, error) {
	l := cfg.Budget
	if l == (board.Budget{Board: l.Board}) {
		return nil, nil
	}
	if l.MemoryMiB == 0 {
		return nil, errors.New("config Budget: limits are set but Budget.MemoryMiB is not; set it (e.g. 512) or remove the Budget section")
	}
	full, err := l.Fill()
	if err != nil {
		return nil, fmt.Errorf("config Budget: %w", err)
	}
	return &full, nil
}

// checkStorage checks Datastore.StorageMax against the free disk. A repo with a budget (made for a board) refuses to start on a
// violation; others get a warning.
func checkStorage(dir string, cfg *config.Config, strict bool, stderr io.Writer) error {
	max, err := config.ParseStorageMax(cfg.Datastore.StorageMax)
	if err != nil || max == 0 {
		return err // "" is no cap
	}
	disk, err := statDisk(dir)
	if err != nil {
		if strict {
			return err
		}
		return nil
	}
	err = board.CheckStorage(int64(max), disk)
	if err != nil && !strict {
		fmt.Fprintf(stderr, "WARNING: %v\n", err)
		return nil
	}
	return err
}

// sdNotify sends state to systemd's notification socket ($NOTIFY_SOCKET,
// set for Type=notify units). Without one it does nothing.
func sdNotify(state string) error {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return nil
	}
	// Go maps a leading '@' to the abstract socket namespace.
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.Write([]byte(state))
	return err
}

// checkAPIExposure refuses a non-loopback RPC address unless it is
// protected by API.Authorizations or explicitly opened.
func checkAPIExposure(m ma.Multiaddr, api config.API) error {
	if manet.IsIPLoopback(m) {
		return nil
	}
	if _, err := m.ValueForProtocol(ma.P_UNIX); err == nil {
		return nil
	}
	if len(api.Authorizations) > 0 || api.AllowUnauthenticated {
		return nil
	}
	return fmt.Errorf("refusing to serve the RPC on %s without protection: set API.Authorizations "+
		`(e.g. cairn config --json API.Authorizations '{"me":{"AuthSecret":"bearer:SECRET","AllowedPaths":["/api/v0"]}}') `+
		"or, at your own risk, API.AllowUnauthenticated true", m)
}

// startAutoGC collects garbage every Datastore.GCPeriod while usage is at
// or above Datastore.StorageGCWatermark percent of StorageMax.
func startAutoGC(ctx context.Context, n *node.Node, log io.Writer) error {
	cfg := n.Config().Datastore
	period, err := cfg.GCInterval()
	if err != nil {
		return err
	}
	max := n.Storage().Max()
	if max == 0 {
		return errors.New("--enable-gc needs Datastore.StorageMax")
	}
	mark := cfg.StorageGCWatermark
	if mark <= 0 || mark > 100 {
		mark = 90
	}
	go func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			used, err := n.Storage().Usage()
			if err != nil || used*100 < max*uint64(mark) {
				continue
			}
			res, err := n.Storage().CollectGarbage(ctx, nil)
			if err != nil && !errors.Is(err, node.ErrGCRunning) {
				fmt.Fprintf(log, "auto GC: %v\n", err)
				continue
			}
			fmt.Fprintf(log, "auto GC: removed %d blocks, %d bytes\n", res.Removed, res.FreedBytes)
		}
	}()
	return nil
}

// statDisk is board.StatDisk for the store of the repo at dir.
func statDisk(dir string) (board.Disk, error) {
	used, err := storage.DiskBytes(filepath.Join(dir, storage.FileName))
	if err != nil {
		return board.Disk{}, err
	}
	return board.StatDisk(dir, used)
}

// daemonGateway is the HTTP gateway the daemon runs, if any.
type daemonGateway struct {
	srv  *gateway.Server
	ls   []manet.Listener
	once sync.Once
}

// startGateway listens on every Addresses.Gateway address, as Kubo
// does. concurrency is the board budget's (0: the
// gateway's default).
func startGateway(n *node.Node, offline bool, concurrency int) (*daemonGateway, error) {
	addrs, err := config.ParseAddrs("Addresses.Gateway", n.Config().Addresses.Gateway)
	if err != nil {
		return nil, err
	}
	// The server exists without listeners too: the http_ipfs module app
	// serves through it.
	g := &daemonGateway{}
	g.srv, err = gateway.New(n, gateway.Options{Concurrency: concurrency, Offline: offline, ServerHeader: "cairn/" + node.Version})
	if err != nil {
		return nil, err
	}
	for _, m := range addrs {
		l, err := manet.Listen(m)
		if err != nil {
			g.close()
			return nil, fmt.Errorf("serving the gateway on %s: %w", m, err)
		}
		g.ls = append(g.ls, l)
	}
	return g, nil
}

// serve starts serving on the listeners and prints them, as Kubo does
// after the RPC's lines.
func (g *daemonGateway) serve(stdout io.Writer) {
	for _, l := range g.ls {
		fmt.Fprintf(stdout, "Gateway server listening on %s\n", l.Multiaddr())
		go func(l net.Listener) {
			if err := g.srv.Serve(l); err != nil {
				log.Errorf("gateway on %s: %v", l.Addr(), err)
			}
		}(manet.NetListener(l))
	}
	if g.srv != nil && g.srv.RoutingAPI() {
		for _, l := range g.ls {
			fmt.Fprintf(stdout, "Routing V1 API exposed at http://%s/routing/v1\n", l.Addr())
		}
	}
}

// port is the first gateway listener's port ("" without one).
func (g *daemonGateway) port() string {
	if len(g.ls) == 0 {
		return ""
	}
	_, port, err := net.SplitHostPort(g.ls[0].Addr().String())
	if err != nil {
		return ""
	}
	return port
}

// close stops the gateway (once).
func (g *daemonGateway) close() {
	g.once.Do(func() {
		if g.srv != nil {
			_ = g.srv.Shutdown(2 * time.Second)
		}
		for _, l := range g.ls {
			_ = l.Close()
		}
	})
}
