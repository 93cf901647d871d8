package testutil

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"cairn/node"

	"github.com/ipfs/boxo/ipns"
	"github.com/ipfs/boxo/namesys"
)

// IpnsPut is one request an IpnsPublisher received, as parsed and checked
// by the publisher.
type IpnsPut struct {
	Method, Path, ContentType string
	UserAgent                 string
	Name                      ipns.Name    // the name of the path
	Record                    *ipns.Record // nil when the body is not a record
	Raw                       []byte
	// Err says why the record was refused (it does not parse, or its
	// signature does not match Name); nil for a valid record.
	Err error
}

// IpnsPublisher is a delegated IPNS publisher on 127.0.0.1 for tests: the
// IPNS API of the Delegated Routing V1 HTTP API (PUT
// /routing/v1/ipns/{name}), checking each record it receives against the
// name in the path (boxo's ipns.ValidateWithName: signature, validity).
// Status, if set, is its answer to every PUT (after the record is
// recorded); Hang holds every request until the publisher is closed.
type IpnsPublisher struct {
	URL string
	srv *httptest.Server

	mu     sync.Mutex
	puts   []IpnsPut
	status int
	hang   chan struct{}
}

// NewIpnsPublisher starts a publisher that answers status (0: 200 OK).
// With hang, requests are recorded and then held until the test ends.
func NewIpnsPublisher(t testing.TB, status int, hang bool) *IpnsPublisher {
	t.Helper()
	p := &IpnsPublisher{status: status}
	if hang {
		p.hang = make(chan struct{})
	}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	if !strings.HasPrefix(p.srv.URL, "http://127.0.0.1:") && !strings.HasPrefix(p.srv.URL, "http://[::1]:") {
		t.Fatalf("publisher %s is not on loopback", p.srv.URL)
	}
	p.URL = p.srv.URL
	t.Cleanup(p.Close)
	return p
}

// Close stops the publisher (releasing held requests first).
func (p *IpnsPublisher) Close() {
	p.mu.Lock()
	if p.hang != nil {
		close(p.hang)
		p.hang = nil
	}
	p.mu.Unlock()
	p.srv.CloseClientConnections()
	p.srv.Close()
}

// Puts returns the requests received so far.
func (p *IpnsPublisher) Puts() []IpnsPut {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]IpnsPut(nil), p.puts...)
}

func (p *IpnsPublisher) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, int64(ipns.MaxRecordSize)+1))
	put := IpnsPut{Method: r.Method, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"),
		UserAgent: r.UserAgent(), Raw: raw}
	name, err := ipns.NameFromString(strings.TrimPrefix(r.URL.Path, "/routing/v1/ipns/"))
	if err == nil {
		put.Name = name
		put.Record, err = ipns.UnmarshalRecord(raw)
	}
	if err == nil {
		err = ipns.ValidateWithName(put.Record, name)
	}
	put.Err = err
	p.mu.Lock()
	p.puts = append(p.puts, put)
	status, hang := p.status, p.hang
	p.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
		return
	}
	switch {
	case status != 0:
		http.Error(w, "publisher says no", status)
	case r.Method != http.MethodPut || !strings.HasPrefix(r.URL.Path, "/routing/v1/ipns/"):
		http.Error(w, "not found", http.StatusNotFound)
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadRequest)
	}
}

// CheckPut asserts that the i-th request p received is the Delegated
// Routing V1 PUT of a valid record of name with value want and sequence
// seq, and returns its body.
func (p *IpnsPublisher) CheckPut(t testing.TB, i int, name ipns.Name, want string, seq uint64) []byte {
	t.Helper()
	puts := p.Puts()
	if len(puts) <= i {
		t.Fatalf("publisher %s: %d requests, want at least %d", p.URL, len(puts), i+1)
	}
	put := puts[i]
	if put.Method != http.MethodPut || put.Path != "/routing/v1/ipns/"+name.String() || put.ContentType != "application/vnd.ipfs.ipns-record" {
		t.Errorf("request %d: %s %s (%s), want PUT /routing/v1/ipns/%s (application/vnd.ipfs.ipns-record)", i, put.Method, put.Path, put.ContentType, name)
	}
	if put.Err != nil {
		t.Fatalf("request %d: record refused by the publisher: %v", i, put.Err)
	}
	if v, err := put.Record.Value(); err != nil || v.String() != want {
		t.Errorf("request %d: value %v (%v), want %s", i, v, err, want)
	}
	if s, err := put.Record.Sequence(); err != nil || s != seq {
		t.Errorf("request %d: sequence %d (%v), want %d", i, s, err, seq)
	}
	return put.Raw
}

// LocalRecord is the IPNS record of n's own key in its store.
func LocalRecord(t testing.TB, n *node.Node) *ipns.Record {
	t.Helper()
	raw, err := n.Store.Datastore().Get(context.Background(), namesys.IpnsDsKey(ipns.NameFromPeer(n.PeerID)))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ipns.UnmarshalRecord(raw)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}
