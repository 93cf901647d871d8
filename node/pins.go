// pins.go: local pins, kept as records in the store's datastore view.
//
// A pin is one key, /pins/recursive/<cid> or /pins/direct/<cid>, whose
// value is the pin's name (empty by default). Indirect pins are not
// stored: they are the blocks reachable from recursive pins. Pinning a
// DAG that is already stored only writes its record (the DAG is read, not
// rewritten). This is leaner than boxo's dspinner, which keeps CBOR pin
// objects plus secondary indexes: cairn needs one small key per pin and
// reads its pins with one prefix scan.

package node

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	dsq "github.com/ipfs/go-datastore/query"
)

// Pin types, as Kubo names them.
const (
	PinRecursiveType = "recursive"
	PinDirectType    = "direct"
	PinIndirectType  = "indirect"
)

// Datastore key prefixes of pins.
const (
	pinRecursivePrefix = "/pins/recursive/"
	pinDirectPrefix    = "/pins/direct/"
)

// PinEntry is one stored pin.
type PinEntry struct {
	Cid  cid.Cid
	Type string // recursive or direct
	Name string
}

func pinKey(prefix string, c cid.Cid) ds.Key { return ds.NewKey(prefix + c.String()) }

// AddRecursive records a recursive pin of c, whose DAG the caller has just
// stored (add, dag put); it does not walk the DAG.
func (p *Pins) AddRecursive(ctx context.Context, c cid.Cid, name ...string) error {
	v := ""
	if len(name) > 0 {
		v = name[0]
	}
	return p.AddRoots(ctx, v, c)
}

// AddRoots records recursive pins named name of every c in cs, all or
// none (one transaction), like AddRecursive.
func (p *Pins) AddRoots(ctx context.Context, name string, cs ...cid.Cid) error {
	b, err := p.n.Store.Datastore().Batch(ctx)
	if err != nil {
		return err
	}
	return p.addRoots(ctx, b, name, cs)
}

// AddRootsAfter is AddRoots for the blocks s wrote and has not synced:
// the pins are written after them, durable once they and the blocks are
// (often in one sync), and not written if a block failed.
func (p *Pins) AddRootsAfter(ctx context.Context, s *WriteSession, name string, cs ...cid.Cid) error {
	return p.addRoots(ctx, s.batch.Datastore(), name, cs)
}

func (p *Pins) addRoots(ctx context.Context, b ds.Batch, name string, cs []cid.Cid) error {
	n := p.n
	for _, c := range cs {
		b.Put(ctx, pinKey(pinRecursivePrefix, c), []byte(name))
		b.Delete(ctx, pinKey(pinDirectPrefix, c))
	}
	if err := b.Commit(ctx); err != nil {
		return err
	}
	for _, c := range cs {
		n.Network().Provide(c) // online with a DHT: announce the new root (queued)
	}
	return nil
}

// IsRecursive reports whether c has a recursive pin.
func (p *Pins) IsRecursive(ctx context.Context, c cid.Cid) (bool, error) {
	n := p.n
	return n.Store.Datastore().Has(ctx, pinKey(pinRecursivePrefix, c))
}

// Add pins c. A recursive pin needs every block of the DAG stored
// (they are all read, and each is marked for a running GC before it is
// read); progress, if set, gets the count and bytes of blocks seen. A direct pin
// needs the root block only. Pinning directly what is pinned recursively
// is Kubo's error; pinning recursively what is pinned directly upgrades.
func (p *Pins) Add(ctx context.Context, c cid.Cid, recursive bool, name string, progress func(blocks int, bytes uint64)) error {
	n := p.n
	d := n.Store.Datastore()
	isRec, err := d.Has(ctx, pinKey(pinRecursivePrefix, c))
	if err != nil {
		return err
	}
	// The session protects what the pin reads from a GC that starts
	// before the pin is recorded.
	sess := n.Storage().BeginWrite()
	defer sess.End()
	if !recursive {
		if isRec {
			return fmt.Errorf("%s already pinned recursively", c)
		}
		sess.record(c.Hash())
		if _, err := n.UnixFS().Links(ctx, c); err != nil {
			return err
		}
		return d.Put(ctx, pinKey(pinDirectPrefix, c), []byte(name))
	}
	if isRec && progress == nil {
		// Pinning again replaces the name, by an empty one too (boxo).
		return d.Put(ctx, pinKey(pinRecursivePrefix, c), []byte(name))
	}
	// With progress, a DAG already pinned is walked again, as Kubo's
	// pinner does, so that the progress counts it.
	seen, bytes := 0, uint64(0)
	err = n.Dag().Walk(ctx, c, nil, func(x cid.Cid) error {
		sess.record(x.Hash())
		seen++
		if progress != nil {
			if sz, err := n.Blocks.GetSize(ctx, x); err == nil {
				bytes += uint64(sz)
			}
			progress(seen, bytes)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return p.AddRecursive(ctx, c, name)
}

// Remove removes the pin of c. With recursive false, a recursive pin
// is an error, as in Kubo.
func (p *Pins) Remove(ctx context.Context, c cid.Cid, recursive bool) error {
	n := p.n
	d := n.Store.Datastore()
	isRec, err := d.Has(ctx, pinKey(pinRecursivePrefix, c))
	if err != nil {
		return err
	}
	if isRec {
		if !recursive {
			return fmt.Errorf("%s is pinned recursively", c)
		}
		return d.Delete(ctx, pinKey(pinRecursivePrefix, c))
	}
	isDirect, err := d.Has(ctx, pinKey(pinDirectPrefix, c))
	if err != nil {
		return err
	}
	if !isDirect {
		return ErrNotPinned
	}
	return d.Delete(ctx, pinKey(pinDirectPrefix, c))
}

// Update moves a recursive pin from one root to another, reading only
// the new DAG (shared blocks are simply reached again); with unpin false
// the old pin stays.
func (p *Pins) Update(ctx context.Context, from, to cid.Cid, unpin bool) error {
	n := p.n
	d := n.Store.Datastore()
	ok, err := d.Has(ctx, pinKey(pinRecursivePrefix, from))
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("'from' cid was not recursively pinned already")
	}
	if from.Equals(to) {
		return nil
	}
	// boxo's pinner refuses to move onto an existing recursive pin (the
	// old pin would be dropped and the other's name overwritten).
	if ok, err := d.Has(ctx, pinKey(pinRecursivePrefix, to)); err != nil {
		return err
	} else if ok {
		return errors.New("'to' cid was already recursively pinned")
	}
	name, err := d.Get(ctx, pinKey(pinRecursivePrefix, from))
	if err != nil {
		return err
	}
	sess := n.Storage().BeginWrite()
	defer sess.End()
	err = n.Dag().Walk(ctx, to, nil, func(x cid.Cid) error { sess.record(x.Hash()); return nil })
	if err != nil {
		return err
	}
	b, err := d.Batch(ctx)
	if err != nil {
		return err
	}
	b.Put(ctx, pinKey(pinRecursivePrefix, to), name)
	b.Delete(ctx, pinKey(pinDirectPrefix, to))
	if unpin {
		b.Delete(ctx, pinKey(pinRecursivePrefix, from))
	}
	// One transaction: a crash leaves either the old pin or the new one.
	return b.Commit(ctx)
}

// markLive names every pin: a recursive pin's whole DAG is live, a
// direct pin's block alone.
func (p *Pins) markLive(ctx context.Context, walk func(cid.Cid) error, block func(cid.Cid)) error {
	pins, err := p.List(ctx, "")
	if err != nil {
		return err
	}
	for _, e := range pins {
		if e.Type == PinDirectType {
			block(e.Cid)
			continue
		}
		if err := walk(e.Cid); err != nil {
			return fmt.Errorf("pin %s: %w", e.Cid, err)
		}
	}
	return nil
}

// List lists the stored pins of one type ("recursive" or "direct"), or of
// both ("").
func (p *Pins) List(ctx context.Context, typ string) ([]PinEntry, error) {
	n := p.n
	var out []PinEntry
	for _, k := range []struct{ typ, prefix string }{{PinRecursiveType, pinRecursivePrefix}, {PinDirectType, pinDirectPrefix}} {
		if typ != "" && typ != k.typ {
			continue
		}
		res, err := n.Store.Datastore().Query(ctx, dsq.Query{Prefix: strings.TrimSuffix(k.prefix, "/")})
		if err != nil {
			return nil, err
		}
		for e := range res.Next() {
			if e.Error != nil {
				return nil, e.Error
			}
			c, err := cid.Decode(strings.TrimPrefix(e.Key, k.prefix))
			if err != nil {
				return nil, fmt.Errorf("pin record %q: %w", e.Key, err)
			}
			out = append(out, PinEntry{Cid: c, Type: k.typ, Name: string(e.Value)})
		}
	}
	return out, nil
}

// Count returns the number of stored pins, recursive and direct
// (keys only: no record is decoded).
func (p *Pins) Count(ctx context.Context) (int, error) {
	n := p.n
	q, err := n.Store.Datastore().Query(ctx, dsq.Query{Prefix: "/pins/", KeysOnly: true})
	if err != nil {
		return 0, err
	}
	defer q.Close()
	var count int
	for r := range q.Next() {
		if r.Error != nil {
			return count, r.Error
		}
		count++
	}
	return count, nil
}

// ForEachIndirect calls fn once for every block reachable from a
// recursive pin that is not itself a root of a pin, with the root it was
// reached through. Memory: one map entry per block listed.
func (pp *Pins) ForEachIndirect(ctx context.Context, fn func(c, via cid.Cid) error) error {
	n := pp.n
	pins, err := pp.List(ctx, "")
	if err != nil {
		return err
	}
	roots := map[string]bool{}
	for _, p := range pins {
		roots[p.Cid.KeyString()] = true
	}
	seen := map[string]struct{}{}
	ws := newWalkSet()
	for _, p := range pins {
		if p.Type != PinRecursiveType {
			continue
		}
		err := n.Dag().Walk(ctx, p.Cid, ws, func(c cid.Cid) error {
			if c.Equals(p.Cid) {
				return nil
			}
			k := c.KeyString()
			if _, dup := seen[k]; dup || roots[k] {
				return nil
			}
			seen[k] = struct{}{}
			return fn(c, p.Cid)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Reason reports whether c is pinned and how: "pinned: recursive",
// "pinned: direct", or "pinned via <root>" when c is inside the DAG of a
// recursive pin (the walks stop at the first hit).
func (p *Pins) Reason(ctx context.Context, c cid.Cid) (string, bool, error) {
	kind, via, err := p.State(ctx, c)
	switch {
	case err != nil:
		return "", false, err
	case kind == PinRecursiveType || kind == PinDirectType:
		return "pinned: " + kind, true, nil
	case kind == PinIndirectType:
		return "pinned via " + via.String(), true, nil
	}
	return "", false, nil
}

// errFound stops a walk early.
var errFound = errors.New("found")

// State says how c is pinned: "recursive", "direct", "indirect" (with
// the recursive root it is reached from) or "" when it is not pinned.
// With mode "recursive", "direct" or "indirect" only that kind is looked
// for (Kubo's IsPinnedWithType: a block pinned directly and inside a
// recursive pin is "indirect" for mode indirect); "" or "all" looks for
// each in that order.
func (pp *Pins) State(ctx context.Context, c cid.Cid, mode ...string) (string, cid.Cid, error) {
	n := pp.n
	m := "all"
	if len(mode) > 0 && mode[0] != "" {
		m = mode[0]
	}
	d := n.Store.Datastore()
	for _, k := range []struct{ typ, prefix string }{{PinRecursiveType, pinRecursivePrefix}, {PinDirectType, pinDirectPrefix}} {
		if m != "all" && m != k.typ {
			continue
		}
		if ok, err := d.Has(ctx, pinKey(k.prefix, c)); err != nil || ok {
			return k.typ, cid.Undef, err
		}
	}
	if m != "all" && m != PinIndirectType {
		return "", cid.Undef, nil
	}
	pins, err := pp.List(ctx, PinRecursiveType)
	if err != nil {
		return "", cid.Undef, err
	}
	// c's own recursive pin goes last: its walk marks c as seen, and c
	// may still be indirect through another pin.
	sort.SliceStable(pins, func(i, j int) bool { return !pins[i].Cid.Equals(c) && pins[j].Cid.Equals(c) })
	ws := newWalkSet()
	for _, p := range pins {
		err := n.Dag().Walk(ctx, p.Cid, ws, func(x cid.Cid) error {
			// A recursive root is not indirect through itself (Kubo).
			if x.Equals(c) && !x.Equals(p.Cid) {
				return errFound
			}
			return nil
		})
		if errors.Is(err, errFound) {
			return PinIndirectType, p.Cid, nil
		}
		if err != nil {
			return "", cid.Undef, err
		}
	}
	return "", cid.Undef, nil
}
