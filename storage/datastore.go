// datastore.go: the go-datastore view of the "data" bucket, for records that
// are not blocks (pins, the MFS root, keys, IPNS records).

package storage

import (
	"context"
	"errors"
	"sort"
	"strings"

	ds "github.com/ipfs/go-datastore"
	dsq "github.com/ipfs/go-datastore/query"
	bolt "go.etcd.io/bbolt"
)

// Datastore is the key/value view of a Store. Missing keys give
// ds.ErrNotFound. Writes are durable when they return; a Batch commits all
// its writes in one transaction.
type Datastore struct{ s *Store }

var _ ds.Batching = (*Datastore)(nil)

// Datastore returns the store's key/value view.
func (s *Store) Datastore() *Datastore { return &Datastore{s: s} }

// Get returns a copy of the value.
func (d *Datastore) Get(_ context.Context, k ds.Key) ([]byte, error) {
	var v []byte
	err := d.view(k.Bytes(), func(raw []byte) { v = append([]byte{}, raw...) })
	return v, err
}

// Has reports whether k is present.
func (d *Datastore) Has(ctx context.Context, k ds.Key) (bool, error) {
	_, err := d.GetSize(ctx, k)
	if errors.Is(err, ds.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// GetSize returns the length of k's value.
func (d *Datastore) GetSize(_ context.Context, k ds.Key) (int, error) {
	n := -1
	err := d.view(k.Bytes(), func(raw []byte) { n = len(raw) })
	return n, err
}

// overlay returns the writes not yet in the bucket (dslog.go), read
// locked: the caller calls done when it has read the bucket too.
func (d *Datastore) overlay() (o *dsOverlay, done func()) {
	if d.s.w == nil {
		return &dsOverlay{}, func() {}
	}
	o = &d.s.w.ds
	o.mu.RLock()
	return o, o.mu.RUnlock
}

// view calls fn with key's value, from the overlay or the bucket; a
// missing key gives ds.ErrNotFound.
func (d *Datastore) view(key []byte, fn func(v []byte)) error {
	o, done := d.overlay()
	defer done()
	if e, ok := o.lookup(key); ok {
		if e.del {
			return ds.ErrNotFound
		}
		fn(e.val)
		return nil
	}
	return d.s.db.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bucketData).Get(key)
		if raw == nil {
			return ds.ErrNotFound
		}
		fn(raw)
		return nil
	})
}

func (d *Datastore) apply(muts []mutation) error {
	if d.s.w == nil {
		return errors.New("storage: store is read-only")
	}
	return d.s.w.do(muts)
}

// Put stores value under k durably.
func (d *Datastore) Put(_ context.Context, k ds.Key, value []byte) error {
	return d.apply([]mutation{{bucket: bucketData, kind: opPut, key: k.Bytes(), val: append([]byte{}, value...)}})
}

// Delete removes k; a missing key is not an error.
func (d *Datastore) Delete(_ context.Context, k ds.Key) error {
	return d.apply([]mutation{{bucket: bucketData, kind: opDel, key: k.Bytes()}})
}

// Sync is a no-op: every write is durable when it returns.
func (d *Datastore) Sync(context.Context, ds.Key) error { return nil }

// Close is a no-op; the Store owns the file.
func (d *Datastore) Close() error { return nil }

// Query lists entries under q.Prefix (read in one short transaction per
// 1024 entries, with the writes not yet in the bucket), then applies
// filters, orders, offset and limit. A commit that folds those writes
// into the bucket waits for it.
func (d *Datastore) Query(ctx context.Context, q dsq.Query) (dsq.Results, error) {
	prefix := ds.NewKey(q.Prefix).String()
	if prefix != "/" {
		prefix += "/"
	}
	o, done := d.overlay()
	defer done()
	var entries []dsq.Entry
	var after []byte
	for {
		n := 0
		err := d.s.db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketData).Cursor()
			var k, v []byte
			if after == nil {
				k, v = c.Seek([]byte(prefix))
			} else {
				k, v = c.Seek(after)
				if k != nil && string(k) == string(after) {
					k, v = c.Next()
				}
			}
			for ; k != nil && strings.HasPrefix(string(k), prefix) && n < 1024; k, v = c.Next() {
				e := dsq.Entry{Key: string(k), Size: len(v)}
				if !q.KeysOnly {
					e.Value = append([]byte{}, v...)
				}
				entries = append(entries, e)
				after = append(after[:0], k...)
				n++
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if n < 1024 {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	entries = withOverlay(entries, o, prefix, q.KeysOnly)
	qNoPrefix := q
	qNoPrefix.Prefix = ""
	return dsq.NaiveQueryApply(qNoPrefix, dsq.ResultsWithEntries(q, entries)), nil
}

// Batch returns a batch whose writes commit together in one transaction.
func (d *Datastore) Batch(context.Context) (ds.Batch, error) {
	return &dsBatch{d: d}, nil
}

type dsBatch struct {
	d     *Datastore
	muts  []mutation
	after *Batch // Batch.Datastore
}

func (b *dsBatch) Put(_ context.Context, k ds.Key, v []byte) error {
	b.muts = append(b.muts, mutation{bucket: bucketData, kind: opPut, key: k.Bytes(), val: append([]byte{}, v...)})
	return nil
}

func (b *dsBatch) Delete(_ context.Context, k ds.Key) error {
	b.muts = append(b.muts, mutation{bucket: bucketData, kind: opDel, key: k.Bytes()})
	return nil
}

func (b *dsBatch) Commit(ctx context.Context) error {
	if len(b.muts) == 0 {
		return nil
	}
	muts := b.muts
	b.muts = nil
	if b.after == nil {
		return b.d.apply(muts)
	}
	w := b.d.s.w
	if w == nil {
		return errors.New("storage: store is read-only")
	}
	r := &request{muts: muts, done: make(chan error, 1), after: b.after}
	if err := w.submit(ctx, r); err != nil {
		return err
	}
	return <-r.done
}

// withOverlay applies the overlay's writes under prefix to entries (in
// key order, as the bucket gave them), keeping that order.
func withOverlay(entries []dsq.Entry, o *dsOverlay, prefix string, keysOnly bool) []dsq.Entry {
	for k, e := range o.m {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		i := sort.Search(len(entries), func(i int) bool { return entries[i].Key >= k })
		found := i < len(entries) && entries[i].Key == k
		switch {
		case e.del && found:
			entries = append(entries[:i], entries[i+1:]...)
		case e.del:
		case found:
			entries[i].Size = len(e.val)
			entries[i].Value = nil
			if !keysOnly {
				entries[i].Value = append([]byte{}, e.val...)
			}
		default:
			ne := dsq.Entry{Key: k, Size: len(e.val)}
			if !keysOnly {
				ne.Value = append([]byte{}, e.val...)
			}
			entries = append(entries, dsq.Entry{})
			copy(entries[i+1:], entries[i:])
			entries[i] = ne
		}
	}
	return entries
}
