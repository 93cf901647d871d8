// mount.go: libp2p stream mounting, Kubo's p2p commands
// (Experimental.Libp2pStreamMounting; docs/p2p.md). Two kinds of
// listener, as Kubo's:
//
//   - a forwarder (p2p/forward) listens on a local TCP address and, for
//     each connection accepted, opens a libp2p stream of its protocol to
//     one peer and copies bytes both ways;
//   - a service (p2p/listen) answers streams of its protocol from any
//     peer by dialling its target address (optionally writing the remote
//     peer ID and a newline to it first) and copying bytes both ways.
//
// Every forwarded stream is a stream of the libp2p host, so the resource
// manager counts it (under its protocol and the service StreamService) and
// the bandwidth caps apply; its peer is tagged in the connection manager
// while it lasts. Unlike Kubo, which closes both sides as soon as one
// direction ends, the end of one direction is passed on as a half-close
// (TCP CloseWrite, stream CloseWrite): request-then-reply protocols that
// shut down their sending side work through the tunnel. An error on
// either side resets both.

package p2p

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	logging "github.com/ipfs/go-log/v2"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/core/protocol"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// ProtoPrefix is the namespace protocol names must be in unless the
// caller allows custom protocols (Kubo's rule).
const ProtoPrefix = "/x/"

// StreamService is the resource manager service of forwarded streams: its
// limits (the scaled ServiceDefault) bound how many streams and how much
// stream memory p2p forwarding may take.
const StreamService = "cairn.p2p"

// p2pDialTimeout bounds opening the stream of a forwarded connection and
// dialling a service's target (Kubo's 30 s).
const p2pDialTimeout = 30 * time.Second

// p2pConnTag protects a peer with forwarded streams from the connection
// manager's trimming (Kubo's tag and weight).
const (
	p2pConnTag    = "stream-fwd"
	p2pConnWeight = 20
)

// p2pLog is Kubo's subsystem name for stream mounting.
var p2pLog = logging.Logger("p2p-mount")

var (
	// ErrMountingDisabled is Kubo's answer when Experimental.Libp2pStreamMounting is off.
	ErrMountingDisabled = errors.New("libp2p stream mounting not enabled")
	// ErrListenerExists is Kubo's answer to a second listener on the
	// same protocol (p2p/listen) or listen address (p2p/forward).
	ErrListenerExists = errors.New("listener already registered")
	// ErrProtocolNamespace is Kubo's answer to a protocol outside /x/.
	ErrProtocolNamespace = errors.New("protocol name must be within '" + ProtoPrefix + "' namespace")
)

// ListenerInfo describes one listener (p2p/ls). A forwarder's listen
// address is its TCP address and its target /p2p/<peer>; a service's
// listen address is /p2p/<own id> and its target the TCP address.
type ListenerInfo struct {
	Protocol      string
	ListenAddress string
	TargetAddress string
}

// StreamInfo describes one forwarded stream (p2p/stream/ls).
type StreamInfo struct {
	ID            uint64
	Protocol      string
	OriginAddress string
	TargetAddress string
}

// P2P holds the listeners and streams of an online node (Net.P2P). It is
// safe for concurrent use.
type P2P struct {
	h    host.Host // capped (bwcap.go)
	self peer.ID
	ctx  context.Context

	mu       sync.Mutex
	closed   bool
	forwards map[string]*p2pForwarder // by listen address
	services map[protocol.ID]*p2pService
	streams  map[uint64]*p2pStream
	nextID   uint64
	tags     map[peer.ID]int
	wg       sync.WaitGroup
}

type p2pForwarder struct {
	proto protocol.ID
	laddr ma.Multiaddr
	peer  peer.ID
	l     manet.Listener
	done  chan struct{}
}

type p2pService struct {
	proto  protocol.ID
	target ma.Multiaddr
	report bool
	done   chan struct{}
}

type p2pStream struct {
	p              *P2P
	id             uint64
	proto          protocol.ID
	origin, target ma.Multiaddr
	peer           peer.ID
	local          manet.Conn
	remote         network.Stream
	ended          atomic.Int32
}

// newP2P starts answering streams for services on h (the "/x/" handler
// that Kubo registers, matching any protocol with a service).
func newP2P(ctx context.Context, h host.Host) *P2P {
	p := &P2P{h: h, self: h.ID(), ctx: ctx, forwards: map[string]*p2pForwarder{},
		services: map[protocol.ID]*p2pService{}, streams: map[uint64]*p2pStream{}, tags: map[peer.ID]int{}}
	h.SetStreamHandlerMatch(ProtoPrefix, func(id protocol.ID) bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		_, ok := p.services[id]
		return ok
	}, p.handleStream)
	return p
}

// CheckProtocol applies Kubo's /x/ rule to a protocol name.
func CheckProtocol(proto string, allowCustom bool) error {
	if !allowCustom && !strings.HasPrefix(proto, ProtoPrefix) {
		return ErrProtocolNamespace
	}
	if proto == "" {
		return errors.New("protocol name is empty")
	}
	return nil
}

// CheckTarget is Kubo's check of a service's target: a TCP or UDP
// port that is not 0.
func CheckTarget(target ma.Multiaddr) error {
	sport, _ := target.ValueForProtocol(ma.P_TCP)
	if sport == "" {
		sport, _ = target.ValueForProtocol(ma.P_UDP)
	}
	if sport == "" {
		return errors.New("address does not contain tcp or udp protocol")
	}
	port, err := strconv.Atoi(sport)
	if err != nil {
		return err
	}
	if port == 0 {
		return errors.New("port can not be 0")
	}
	return nil
}

// Handle is a listener started by Listen or Forward.
type Handle struct {
	done    chan struct{}
	key     string
	service bool
}

// Done is closed when the listener is closed.
func (h *Handle) Done() <-chan struct{} { return h.done }

// Listen starts a service (p2p/listen): streams of proto from any peer
// are forwarded to target; with report, the remote peer's ID and a
// newline are written to target first.
func (p *P2P) Listen(proto protocol.ID, target ma.Multiaddr, report bool) (*Handle, error) {
	if err := CheckTarget(target); err != nil {
		return nil, err
	}
	for _, have := range p.h.Mux().Protocols() {
		if have == proto {
			return nil, fmt.Errorf("protocol %s is already served by this node", proto)
		}
	}
	s := &p2pService{proto: proto, target: target, report: report, done: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrOffline
	}
	if _, ok := p.services[proto]; ok {
		return nil, ErrListenerExists
	}
	p.services[proto] = s
	return &Handle{done: s.done, key: string(proto), service: true}, nil
}

// Forward starts a forwarder (p2p/forward): connections to listen are
// forwarded over streams of proto to target (whose addresses are added
// to the peerstore for a while, as Kubo does).
func (p *P2P) Forward(proto protocol.ID, listen ma.Multiaddr, target peer.AddrInfo) (*Handle, error) {
	l, err := manet.Listen(listen)
	if err != nil {
		return nil, err
	}
	f := &p2pForwarder{proto: proto, laddr: l.Multiaddr(), peer: target.ID, l: l, done: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.Close()
		return nil, ErrOffline
	}
	key := f.laddr.String()
	if _, ok := p.forwards[key]; ok {
		p.mu.Unlock()
		l.Close()
		return nil, ErrListenerExists
	}
	p.forwards[key] = f
	p.wg.Add(1)
	p.mu.Unlock()
	p.h.Peerstore().AddAddrs(target.ID, target.Addrs, peerstore.TempAddrTTL)
	go p.accept(f)
	return &Handle{done: f.done, key: key}, nil
}

// CloseHandle closes the listener of h if it is still open.
func (p *P2P) CloseHandle(h *Handle) {
	p.mu.Lock()
	var f *p2pForwarder
	if h.service {
		if s := p.services[protocol.ID(h.key)]; s != nil && s.done == h.done {
			delete(p.services, s.proto)
			close(s.done)
		}
	} else if f = p.forwards[h.key]; f != nil && f.done == h.done {
		delete(p.forwards, h.key)
	} else {
		f = nil
	}
	p.mu.Unlock()
	if f != nil {
		f.close()
	}
}

func (p *P2P) accept(f *p2pForwarder) {
	defer p.wg.Done()
	for {
		c, err := f.l.Accept()
		if err != nil {
			var te interface{ Temporary() bool }
			if errors.As(err, &te) && te.Temporary() {
				continue
			}
			return
		}
		if !p.track() {
			c.Close()
			return
		}
		go func() {
			defer p.wg.Done()
			p.forwardConn(f, c)
		}()
	}
}

// track counts one more goroutine unless p is closed.
func (p *P2P) track() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.wg.Add(1)
	return true
}

// forwardConn opens the stream of one accepted connection.
func (p *P2P) forwardConn(f *p2pForwarder, c manet.Conn) {
	ctx, cancel := context.WithTimeout(p.ctx, p2pDialTimeout)
	defer cancel()
	s, err := p.h.NewStream(ctx, f.peer, f.proto)
	if err != nil {
		p2pLog.Warnw("failed to dial to remote", "peer", f.peer, "protocol", f.proto, "err", err)
		c.Close()
		return
	}
	if err := s.Scope().SetService(StreamService); err != nil {
		p2pLog.Warnw("stream refused by the resource manager", "peer", f.peer, "protocol", f.proto, "err", err)
		s.Reset()
		c.Close()
		return
	}
	tgt, _ := ma.NewMultiaddr("/p2p/" + f.peer.String())
	p.run(&p2pStream{proto: f.proto, origin: c.RemoteMultiaddr(), target: tgt, peer: f.peer, local: c, remote: s})
}

// handleStream answers a stream of a service's protocol.
func (p *P2P) handleStream(s network.Stream) {
	p.mu.Lock()
	svc := p.services[s.Protocol()]
	p.mu.Unlock()
	if svc == nil || !p.track() {
		s.Reset()
		return
	}
	defer p.wg.Done()
	if err := s.Scope().SetService(StreamService); err != nil {
		p2pLog.Warnw("stream refused by the resource manager", "protocol", svc.proto, "err", err)
		s.Reset()
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, p2pDialTimeout)
	c, err := (&manet.Dialer{}).DialContext(ctx, svc.target)
	cancel()
	if err != nil {
		s.Reset()
		return
	}
	remote := s.Conn().RemotePeer()
	if svc.report {
		if _, err := fmt.Fprintf(c, "%s\n", remote); err != nil {
			c.Close()
			s.Reset()
			return
		}
	}
	origin, _ := ma.NewMultiaddr("/p2p/" + remote.String())
	p.run(&p2pStream{proto: svc.proto, origin: origin, target: svc.target, peer: remote, local: c, remote: s})
}

// run registers st and copies both ways until both directions ended;
// it returns when both copies have.
func (p *P2P) run(st *p2pStream) {
	st.p = p
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		st.local.Close()
		st.remote.Reset()
		return
	}
	st.id = p.nextID
	p.nextID++
	p.streams[st.id] = st
	if p.tags[st.peer]++; p.tags[st.peer] == 1 {
		p.h.ConnManager().TagPeer(st.peer, p2pConnTag, p2pConnWeight)
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if _, err := io.Copy(st.remote, st.local); err != nil {
			st.reset()
			return
		}
		_ = st.remote.CloseWrite()
	}()
	go func() {
		defer wg.Done()
		if _, err := io.Copy(st.local, st.remote); err != nil {
			st.reset()
			return
		}
		if hc, ok := st.local.(interface{ CloseWrite() error }); ok {
			_ = hc.CloseWrite()
		} else {
			st.local.Close()
		}
	}()
	wg.Wait()
	st.local.Close()
	st.remote.Close()
	p.mu.Lock()
	delete(p.streams, st.id)
	if p.tags[st.peer]--; p.tags[st.peer] == 0 {
		delete(p.tags, st.peer)
		p.h.ConnManager().UntagPeer(st.peer, p2pConnTag)
	}
	p.mu.Unlock()
}

// reset ends both sides at once (an error, stream/close, shutdown).
func (st *p2pStream) reset() {
	st.local.Close()
	st.remote.Reset()
}

// Listeners lists forwarders, then services (Kubo's order), each sorted.
func (p *P2P) Listeners() []ListenerInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	var fw, sv []ListenerInfo
	for _, f := range p.forwards {
		fw = append(fw, f.info())
	}
	for _, s := range p.services {
		sv = append(sv, s.info(p.self))
	}
	byKey := func(l []ListenerInfo) {
		sort.Slice(l, func(i, j int) bool {
			if l[i].Protocol != l[j].Protocol {
				return l[i].Protocol < l[j].Protocol
			}
			return l[i].ListenAddress < l[j].ListenAddress
		})
	}
	byKey(fw)
	byKey(sv)
	return append(fw, sv...)
}

func (f *p2pForwarder) close() {
	f.l.Close()
	close(f.done)
}

func (f *p2pForwarder) info() ListenerInfo {
	return ListenerInfo{Protocol: string(f.proto), ListenAddress: f.laddr.String(), TargetAddress: "/p2p/" + f.peer.String()}
}

func (s *p2pService) info(self peer.ID) ListenerInfo {
	return ListenerInfo{Protocol: string(s.proto), ListenAddress: "/p2p/" + self.String(), TargetAddress: s.target.String()}
}

// CloseListeners closes the listeners for which match is true and
// returns how many. Their streams go on (as in Kubo).
func (p *P2P) CloseListeners(match func(ListenerInfo) bool) int {
	p.mu.Lock()
	var fws []*p2pForwarder
	var svcs []*p2pService
	for k, f := range p.forwards {
		if match(f.info()) {
			delete(p.forwards, k)
			fws = append(fws, f)
		}
	}
	for k, s := range p.services {
		if match(s.info(p.self)) {
			delete(p.services, k)
			svcs = append(svcs, s)
		}
	}
	p.mu.Unlock()
	for _, f := range fws {
		f.close()
	}
	for _, s := range svcs {
		close(s.done)
	}
	return len(fws) + len(svcs)
}

// Streams lists the forwarded streams by ID.
func (p *P2P) Streams() []StreamInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]StreamInfo, 0, len(p.streams))
	for _, s := range p.streams {
		out = append(out, StreamInfo{ID: s.id, Protocol: string(s.proto),
			OriginAddress: s.origin.String(), TargetAddress: s.target.String()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ResetStreams resets the stream with id, or every stream with all, and
// returns how many it reset (an unknown id resets none, as in Kubo).
func (p *P2P) ResetStreams(id uint64, all bool) int {
	p.mu.Lock()
	var todo []*p2pStream
	for sid, s := range p.streams {
		if all || sid == id {
			todo = append(todo, s)
		}
	}
	p.mu.Unlock()
	for _, s := range todo {
		s.reset()
	}
	return len(todo)
}

// close stops everything: listeners closed, streams reset, and waits
// for their goroutines (Net.Close, before the host closes).
func (p *P2P) close() {
	p.h.RemoveStreamHandler(ProtoPrefix)
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.CloseListeners(func(ListenerInfo) bool { return true })
	p.ResetStreams(0, true)
	p.wg.Wait()
}
