// lanpeer.go: a peer on loopback and what it reads of the daemon.

package lanpeer

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"cairn/internal/daemon"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/net/connmgr"
	ma "github.com/multiformats/go-multiaddr"
)

// New is a peer: TCP on loopback, no listen address, no resource limits
// of its own (the daemon's are what is tested), no connection manager
// trimming.
func New() (host.Host, error) {
	cm, err := connmgr.NewConnManager(1<<20, 1<<20)
	if err != nil {
		return nil, err
	}
	return libp2p.New(libp2p.NoListenAddrs, libp2p.ResourceManager(&network.NullResourceManager{}),
		libp2p.ConnectionManager(cm), libp2p.DisableRelay(), libp2p.Ping(false))
}

// Info is the daemon as a peer.
type Info struct {
	peer.AddrInfo
	TCP    string // host:port of its loopback TCP swarm listener
	IPNSID string // its peer ID as text (an IPNS name)
}

// Target reads d's peer ID and addresses from its RPC, waiting up to 20 s
// for the network layer to serve every protocol of need.
func Target(d *daemon.Daemon, need ...string) (Info, error) {
	var id struct {
		ID        string
		Addresses []string
		Protocols []string
	}
	has := func() bool {
		for _, p := range need {
			if !slices.Contains(id.Protocols, p) {
				return false
			}
		}
		return true
	}
	// The network layer may come up after the RPC answers.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if err := d.JSON("id", nil, &id); err != nil {
			return Info{}, err
		}
		if has() || time.Now().After(deadline) {
			break
		}
	}
	if !has() {
		rt, _ := d.CLI("config", "Routing.Type")
		return Info{}, fmt.Errorf("the daemon does not serve %v (Routing.Type %s): its protocols are %v", need, strings.TrimSpace(rt), id.Protocols)
	}
	pid, err := peer.Decode(id.ID)
	if err != nil {
		return Info{}, err
	}
	t := Info{AddrInfo: peer.AddrInfo{ID: pid}, IPNSID: id.ID}
	for _, s := range id.Addresses {
		m, err := ma.NewMultiaddr(s)
		if err != nil {
			continue
		}
		a, _ := ma.SplitFunc(m, func(c ma.Component) bool { return c.Protocol().Code == ma.P_P2P })
		t.Addrs = append(t.Addrs, a)
		if ip, err := a.ValueForProtocol(ma.P_IP4); err == nil && ip == "127.0.0.1" {
			if port, err := a.ValueForProtocol(ma.P_TCP); err == nil && t.TCP == "" {
				t.TCP = "127.0.0.1:" + port
			}
		}
	}
	if t.TCP == "" {
		return Info{}, fmt.Errorf("the daemon listens on no loopback TCP address: %v", id.Addresses)
	}
	return t, nil
}

// Scrape reads the daemon's /debug/metrics/prometheus at rpc (its RPC
// URL) and calls fn with each sample: its metric name, its labels (the
// text between the braces) and value.
func Scrape(rpc string, fn func(name, labels string, v float64)) {
	resp, err := http.Get(rpc + "/debug/metrics/prometheus")
	if err != nil {
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		i := strings.LastIndexByte(l, ' ')
		if l == "" || l[0] == '#' || i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(l[i+1:], 64)
		if err != nil {
			continue
		}
		name, labels := l[:i], ""
		if j := strings.IndexByte(name, '{'); j >= 0 {
			name, labels = name[:j], strings.TrimSuffix(name[j+1:], "}")
		}
		fn(name, labels, v)
	}
}

// Metrics sums the samples of each metric name (Scrape).
func Metrics(rpc string) map[string]float64 {
	out := map[string]float64{}
	Scrape(rpc, func(name, _ string, v float64) { out[name] += v })
	return out
}

// SubscribeRPC subscribes the daemon whose RPC is rpc to topic and
// counts the messages its subscriber receives until ctx ends: all of
// them, and those whose line holds mark (a peer ID: those from that
// author; "" counts none).
func SubscribeRPC(ctx context.Context, rpc, topic, mark string) (all, marked *atomic.Int64) {
	all, marked = new(atomic.Int64), new(atomic.Int64)
	ready := make(chan struct{})
	go func() {
		u := rpc + "/api/v0/pubsub/sub?arg=u" + base64.RawURLEncoding.EncodeToString([]byte(topic))
		req, _ := http.NewRequestWithContext(ctx, "POST", u, nil)
		resp, err := http.DefaultClient.Do(req)
		close(ready)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 8<<20)
		for sc.Scan() {
			all.Add(1)
			if mark != "" && strings.Contains(sc.Text(), mark) {
				marked.Add(1)
			}
		}
	}()
	<-ready
	time.Sleep(300 * time.Millisecond)
	return all, marked
}
