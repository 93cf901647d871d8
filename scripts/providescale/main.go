// Command providescale measures a reprovide of every stored block
// (Provide.Strategy "all") against a loopback DHT of a few in-process
// peers: the daemon's RssAnon before and during it, how long it takes,
// and the provider records each peer received. It runs inside a network
// namespace with only loopback (it enters one itself).
//
//	go run ./scripts/providescale -bin bin/cairn -blocks 1048576 -peers 4
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cairn/internal/daemon"
	"cairn/scripts/internal/benchutil"

	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	"github.com/libp2p/go-libp2p"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
)

func main() {
	bin := flag.String("bin", "bin/cairn", "cairn binary")
	blocks := flag.Int64("blocks", 1<<20, "1 KiB blocks to store before the reprovide")
	peers := flag.Int("peers", 4, "DHT server peers (in this process)")
	dir := flag.String("dir", "", "work directory (default: a new one under $TMPDIR, removed after)")
	flag.Parse()
	daemon.EnterNetNS()
	if err := daemon.LoopbackOnly(); err != nil {
		fail(err)
	}
	work := *dir
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "cairn-providescale-"); err != nil {
			fail(err)
		}
		defer os.RemoveAll(work)
	}
	if err := run(*bin, work, *blocks, *peers); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "providescale:", err)
	os.Exit(1)
}

// counter is a DHT peer's provider store: it counts the records it is
// given, by provider, and keeps none.
type counter struct {
	mu   sync.Mutex
	by   map[peer.ID]int64
	adds atomic.Int64
}

func (c *counter) AddProvider(_ context.Context, _ []byte, p peer.AddrInfo) error {
	c.adds.Add(1)
	c.mu.Lock()
	c.by[p.ID]++
	c.mu.Unlock()
	return nil
}

func (c *counter) GetProviders(context.Context, []byte) ([]peer.AddrInfo, error) { return nil, nil }
func (c *counter) Close() error                                                  { return nil }

func run(bin, work string, blocks int64, npeers int) error {
	ctx := context.Background()
	// The peers: DHT servers on the LAN protocol, loopback addresses
	// allowed, each counting the records it is sent.
	var hosts []host.Host
	var counters []*counter
	for range npeers {
		h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"))
		if err != nil {
			return err
		}
		defer h.Close()
		c := &counter{by: map[peer.ID]int64{}}
		d, err := dht.New(ctx, h, dht.Mode(dht.ModeServer), dht.ProtocolExtension("/lan"),
			dht.AddressFilter(nil), dht.ProviderStore(c),
			dht.Datastore(dssync.MutexWrap(ds.NewMapDatastore())),
			dht.QueryFilter(func(any, peer.AddrInfo) bool { return true }),
			dht.RoutingTableFilter(func(any, peer.ID) bool { return true }))
		if err != nil {
			return err
		}
		defer d.Close()
		hosts = append(hosts, h)
		counters = append(counters, c)
	}
	for i, a := range hosts {
		for _, b := range hosts[i+1:] {
			if err := a.Connect(ctx, peer.AddrInfo{ID: b.ID(), Addrs: b.Addrs()}); err != nil {
				return err
			}
		}
	}
	// The daemon: filled offline, then started online with the sweep.
	repo := filepath.Join(work, "cairn")
	d, err := daemon.StartCairn(bin, repo, daemon.Options{Offline: true})
	if err != nil {
		return err
	}
	defer d.Stop()
	t0 := time.Now()
	if _, err := benchutil.AddRandom(d.URL, "chunker=size-1024&raw-leaves=true&cid-version=1&pin=true", blocks<<10); err != nil {
		return err
	}
	fmt.Printf("stored %d blocks of 1 KiB in %.1f s\n", blocks, time.Since(t0).Seconds())
	d.Stop()
	o := daemon.Options{ReadyTimeout: 2 * time.Minute, Config: map[string]string{
		"Routing.Type":                      `"dhtserver"`,
		"Routing.LoopbackAddressesOnLanDHT": `true`,
		"Provide.Strategy":                  `"all"`,
		"Bootstrap":                         `[]`,
		"Discovery.MDNS.Enabled":            `false`,
	}}
	if err := d.Restart(o); err != nil {
		return err
	}
	var stat struct{ NumObjects int64 }
	if err := d.JSON("repo/stat", nil, &stat); err != nil {
		return err
	}
	for _, h := range hosts {
		addr := h.Addrs()[0].String() + "/p2p/" + h.ID().String()
		if _, err := d.Post("swarm/connect", url.Values{"arg": {addr}}, nil, ""); err != nil {
			return fmt.Errorf("swarm/connect %s: %w", addr, err)
		}
	}
	time.Sleep(3 * time.Second)
	idle := daemon.ProcStatus(d.Pid(), "RssAnon")
	s := benchutil.Sample(d.Pid(), 20*time.Millisecond, "RssAnon")
	t0 = time.Now()
	// The sweeping provider goes online once its first lookup finds
	// peers; until then the reprovide says so.
	for {
		_, err = d.Post("routing/reprovide", nil, nil, "")
		if err == nil || !strings.Contains(err.Error(), "no DHT peers") || time.Since(t0) > 2*time.Minute {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	took := time.Since(t0)
	peak := s.Done()[0]
	if err != nil {
		return fmt.Errorf("routing/reprovide: %w", err)
	}
	var ps struct {
		Legacy struct{ LastReprovideBatchSize int64 }
	}
	if err := d.JSON("provide/stat", nil, &ps); err != nil {
		return err
	}
	fmt.Printf("repo: %d objects (NumObjects); %d DHT peers on loopback\n", stat.NumObjects, npeers)
	fmt.Printf("reprovide of every block: %d keys in %.1f s (%.0f keys/s)\n", ps.Legacy.LastReprovideBatchSize, took.Seconds(), float64(ps.Legacy.LastReprovideBatchSize)/took.Seconds())
	fmt.Printf("RssAnon: %.1f MiB before, %.1f MiB peak during it\n", float64(idle)/1024, float64(peak)/1024)
	id := peerID(d)
	for i, c := range counters {
		c.mu.Lock()
		fmt.Printf("peer %d: %d provider records from the daemon\n", i+1, c.by[id])
		c.mu.Unlock()
	}
	return nil
}

// peerID is the daemon's peer ID (from its id command).
func peerID(d *daemon.Daemon) peer.ID {
	var v struct{ ID string }
	if d.JSON("id", nil, &v) != nil {
		return ""
	}
	id, _ := peer.Decode(v.ID)
	return id
}
