package node

import (
	"context"
	"testing"
	"time"

	"github.com/ipfs/boxo/path"
)

// FuzzIPNSRecord feeds arbitrary bytes as the IPNS record of the node's
// own name, as a DHT peer's PUT would bring it: the record store takes or
// refuses it, resolving the name then answers a path or an error, and
// never panics.
func FuzzIPNSRecord(f *testing.F) {
	dir := f.TempDir()
	if _, err := Init(dir, "test"); err != nil {
		f.Fatal(err)
	}
	n, err := New(dir, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { n.Close() })
	ctx := context.Background()
	p, _ := path.NewPath("/ipfs/bafkqaaa")
	name, err := n.Names().Publish(ctx, p, PublishOptions{AllowOffline: true, Lifetime: 24 * time.Hour})
	if err != nil {
		f.Fatal(err)
	}
	s, _, err := n.names()
	if err != nil {
		f.Fatal(err)
	}
	key := string(name.RoutingKey())
	rec, err := s.routing.GetValue(ctx, key)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(rec)
	f.Add(rec[:len(rec)/2])
	f.Add([]byte{})
	f.Add([]byte("\x0a\x00\x12\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = s.routing.PutValue(ctx, key, data)
		if got, err := n.Names().Resolve(ctx, "/ipns/"+name.String(), ResolveOptions{NoCache: true}); err == nil && got.String() == "" {
			t.Fatal("resolved to an empty path without an error")
		}
	})
}
