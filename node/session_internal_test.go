package node

import (
	"context"
	"fmt"
	"testing"

	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
)

func rawBlock(t *testing.T, s string) blocks.Block {
	t.Helper()
	h, err := mh.Sum([]byte(s), mh.SHA2_256, -1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := blocks.NewBlockWithCid([]byte(s), cid.NewCidV1(cid.Raw, h))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Ensure a rollback removes the blocks its session stored, and keeps those
// that were stored before it and those another open session touched.
func TestWriteSession_RollbackRemovesOnlyWhatItCreated(t *testing.T) {
	dir := t.TempDir()
	if _, err := Init(dir, "test"); err != nil {
		t.Fatal(err)
	}
	n, err := New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx := context.Background()
	old, mine, shared := rawBlock(t, "old"), rawBlock(t, "mine"), rawBlock(t, "shared")
	s0 := n.Storage().BeginWrite()
	if err := s0.Put(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := s0.End(); err != nil {
		t.Fatal(err)
	}
	a, b := n.Storage().BeginWrite(), n.Storage().BeginWrite()
	if err := a.Put(ctx, old, mine, shared); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, shared); err != nil { // found stored: touched
		t.Fatal(err)
	}
	if err := a.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	a.End()
	for _, c := range []struct {
		b    blocks.Block
		want bool
	}{{old, true}, {mine, false}, {shared, true}} {
		has, err := n.Blocks.Has(ctx, c.b.Cid())
		if err != nil || has != c.want {
			t.Errorf("after rollback, Has(%q) = %v, %v; want %v", c.b.RawData(), has, err, c.want)
		}
	}
	b.End()
}

// Ensure the packed key list gives back every key, in order, with its
// created mark, and forgets the marks when cleared.
func TestKeyLog_RoundTrip(t *testing.T) {
	var l keyLog
	var keys [][]byte
	at := map[int]int{}
	for i := 0; i < 300; i++ {
		k := []byte(fmt.Sprintf("%0*d", 1+i%70, i))
		keys = append(keys, k)
		at[i] = l.add(k)
	}
	for i := 0; i < 300; i += 3 {
		l.markCreated(at[i])
	}
	i := 0
	l.each(func(k []byte, created bool) {
		if string(k) != string(keys[i]) || created != (i%3 == 0) {
			t.Fatalf("entry %d: %q created %v, want %q created %v", i, k, created, keys[i], i%3 == 0)
		}
		i++
	})
	if i != len(keys) {
		t.Fatalf("%d entries, want %d", i, len(keys))
	}
	l.clearCreated()
	l.each(func(k []byte, created bool) {
		if created {
			t.Fatalf("%q still marked after clearCreated", k)
		}
	})
}
