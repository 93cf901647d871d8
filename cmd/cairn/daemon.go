// daemon.go: "cairn init" and "cairn daemon".

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"cairn/httprpc"
	"cairn/modules"
	"cairn/node"

	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

func repoFromFlags(fs *flag.FlagSet) *string {
	p := fs.String("repo-dir", "", "path to the repo (default $CAIRN_PATH or ~/.cairn)")
	return p
}

func resolveRepo(flagVal string) string {
	if flagVal != "" {
		return flagVal
	}
	return node.DefaultRepoPath()
}

func cmdInit(argv []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	profile := fs.String("profile", "", "comma-separated config profiles to apply (e.g. test)")
	fs.StringVar(profile, "p", "", "short for --profile")
	repo := repoFromFlags(fs)
	if err := fs.Parse(argv); err != nil {
		return 1
	}
	dir := resolveRepo(*repo)
	fmt.Fprintf(stdout, "initializing cairn node at %s\n", dir)
	cfg, err := node.Init(dir, *profile)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "generating ED25519 keypair...done\npeer identity: %s\n", cfg.Identity.PeerID)
	if _, err := modules.EnsureCert(dir, cfg.Modules); err != nil {
		fmt.Fprintf(stderr, "WARNING: modules HTTPS certificate: %v\n", err)
	}
	fmt.Fprintf(stdout, "\nto get started, enter:\n\n\tcairn cat /ipfs/QmQPeNsJPyVWPFDVHb9hpzGjp1TuZNxvMxH4wiz2CQ8YdH/readme\n\n")
	return 0
}

func cmdDaemon(argv []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("daemon", flag.ContinueOnError)
	fs.SetOutput(stderr)
	offline := fs.Bool("offline", false, "run without connecting to the network")
	initRepo := fs.Bool("init", false, "initialize the repo with default settings if it does not exist")
	initProfile := fs.String("init-profile", "", "profiles to apply with --init")
	enableGC := fs.Bool("enable-gc", false, "run garbage collection when usage passes Datastore.StorageGCWatermark of StorageMax, every Datastore.GCPeriod")
	repo := repoFromFlags(fs)
	if err := fs.Parse(argv); err != nil {
		return 1
	}
	dir := resolveRepo(*repo)
	if *initRepo && !node.IsInitialized(dir) {
		if _, err := node.Init(dir, *initProfile); err != nil {
			fmt.Fprintf(stderr, "Error: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "initialized cairn repo at %s\n", dir)
	}
	if err := runDaemon(dir, *enableGC, *offline, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	return 0
}

// runDaemon serves the RPC until SIGINT/SIGTERM or /api/v0/shutdown.
func runDaemon(dir string, enableGC, offline bool, stdout, stderr io.Writer) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Signals are caught from the start: a SIGTERM that arrives once the
	// api file exists must still shut down cleanly.
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)
	fmt.Fprintf(stdout, "Initializing daemon...\ncairn version: %s\nRepo version: %s\n", httprpc.Version, node.RepoVersion)
	n, err := node.New(ctx, dir, &node.Options{CompactIfNeeded: true,
		Log: func(f string, a ...any) { fmt.Fprintf(stdout, f+"\n", a...) }})
	if err != nil {
		return err
	}
	defer n.Close()
	if enableGC {
		if err := startAutoGC(ctx, n, stderr); err != nil {
			return err
		}
	}
	if !offline {
		if err := n.StartNet(ctx, node.NetOptions{UserAgent: httprpc.AgentVersion()}); err != nil {
			return err
		}
		for _, a := range n.Net.Host.Network().ListenAddresses() {
			fmt.Fprintf(stdout, "Swarm listening on %s\n", a)
		}
		fmt.Fprintf(stdout, "PeerID: %s\n", n.PeerID)
	}

	addrs := n.Config.Addresses.API
	if len(addrs) == 0 {
		return errors.New("config Addresses.API is empty: nothing to serve the RPC on")
	}
	var listeners []manet.Listener
	closeAll := func() {
		for _, l := range listeners {
			l.Close()
		}
	}
	for _, a := range addrs {
		m, err := ma.NewMultiaddr(a)
		if err != nil {
			closeAll()
			return fmt.Errorf("config Addresses.API %q: %w", a, err)
		}
		if err := checkAPIExposure(m, n.Config.API); err != nil {
			closeAll()
			return err
		}
		l, err := manet.Listen(m)
		if err != nil {
			closeAll()
			return fmt.Errorf("serving RPC on %s: %w", a, err)
		}
		listeners = append(listeners, l)
	}
	if n.Config.API.AllowUnauthenticated && len(n.Config.API.Authorizations) == 0 {
		fmt.Fprintf(stderr, "WARNING: API.AllowUnauthenticated is true: anyone who can reach the RPC port can control this node\n")
	}

	stop := make(chan struct{})
	var once sync.Once
	shutdown := func() { once.Do(func() { close(stop) }) }
	env := &httprpc.Env{Table: httprpc.DefaultTable, Shutdown: shutdown}
	srv := httprpc.NewServer(n, httprpc.DefaultTable, env, httprpc.ServerOptions{ServerHeader: "cairn/" + httprpc.Version})

	errc := make(chan error, len(listeners))
	for _, l := range listeners {
		fmt.Fprintf(stdout, "RPC API server listening on %s\n", l.Multiaddr())
		go func(l net.Listener) { errc <- srv.Serve(l) }(manet.NetListener(l))
	}
	if err := node.WriteAPIFile(dir, listeners[0].Multiaddr().String()); err != nil {
		closeAll()
		return err
	}
	defer node.RemoveAPIFile(dir)
	mh, err := modules.Start(ctx, modules.ViewOf(n), n.Config.Modules, modules.Options{Repo: dir, Version: httprpc.Version})
	if err != nil {
		fmt.Fprintf(stderr, "WARNING: modules not started: %v\n", err)
	}
	defer mh.Close()
	for _, u := range mh.URLs() {
		fmt.Fprintf(stdout, "Module app %s\n", u)
	}
	fmt.Fprintf(stdout, "Daemon is ready\n")

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
	// Let the shutdown response reach its client before the listeners go.
	time.Sleep(50 * time.Millisecond)
	_ = srv.Shutdown(5 * time.Second)
	closeAll()
	return nil
}

// checkAPIExposure refuses a non-loopback RPC address unless it is
// protected by API.Authorizations or explicitly opened.
func checkAPIExposure(m ma.Multiaddr, api node.APIConfig) error {
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
	cfg := n.Cfg().Datastore
	period := time.Hour
	if cfg.GCPeriod != "" {
		d, err := time.ParseDuration(cfg.GCPeriod)
		if err != nil || d <= 0 {
			return fmt.Errorf("config Datastore.GCPeriod %q: want a positive duration", cfg.GCPeriod)
		}
		period = d
	}
	max := n.StorageMax()
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
			used, err := n.Usage()
			if err != nil || used*100 < max*uint64(mark) {
				continue
			}
			res, err := n.CollectGarbage(ctx, nil)
			if err != nil && !errors.Is(err, node.ErrGCRunning) {
				fmt.Fprintf(log, "auto GC: %v\n", err)
				continue
			}
			fmt.Fprintf(log, "auto GC: removed %d blocks, %d bytes\n", res.Removed, res.FreedBytes)
		}
	}()
	return nil
}
