// reclaim.go: giving the space of removed blocks back to the filesystem,
// a segment at a time.

package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ReclaimResult sums up a Reclaim.
type ReclaimResult struct {
	Segments  int   // segment files removed
	Freed     int64 // bytes of those files
	Rewritten int64 // bytes of live blocks copied out of them first
	// IndexFreed is the bytes of the index file's free pages given back
	// to the file system (GiveBackIndex).
	IndexFreed int64
	// Punched is the bytes given back as holes (PunchRemoved), which the
	// caller asks for where Reclaim finds the disk full.
	Punched int64
}

// reclaimChunk bounds the bytes moved per commit, so that adds going on
// meanwhile wait for at most one such commit.
const reclaimChunk = 1 << 20

// YieldFor is how long background work (a GC's deletes, Reclaim's moves)
// leaves the writer to others after a commit of its own that took d while
// they wrote: twice d, so that it holds the writer at most a third of
// the time and adds going on meanwhile keep at least half their rate.
func YieldFor(d time.Duration) time.Duration { return 2 * d }

// ReclaimOptions bound a Reclaim.
type ReclaimOptions struct {
	// Budget, when positive, caps the bytes rewritten in one call;
	// segments that would pass it wait for the next call.
	Budget int64
	// MinGarbage is the share of a segment that removed records must
	// take for it to be reclaimed; 0 means 0.5, so that reclaiming never
	// rewrites more than it frees. A store over its cap asks for less.
	MinGarbage float64
}

// Reclaim gives back the space of removed blocks, then the index file's
// free pages (GiveBackIndex). A segment whose
// removed records take at least MinGarbage of it (half by default) has
// its live blocks copied to the end of the active segment, a chunk per
// commit, and is then removed (the active segment first makes way for a
// new one). Segments left with no live block are removed by the commit
// that empties them, without Reclaim. Blocks are readable throughout,
// and a crash leaves every block either where it was or where it was
// copied.
func (s *Store) Reclaim(ctx context.Context, opts ReclaimOptions) (ReclaimResult, error) {
	minGarbage := opts.MinGarbage
	if minGarbage <= 0 {
		minGarbage = 0.5
	}
	budget := opts.Budget
	var res ReclaimResult
	if s.w == nil {
		return res, nil
	}
	var damaged []error // segments that keep a damaged block
	type cand struct {
		id uint32
		si segInfo
	}
	var cands []cand
	rolled := false
	for {
		cands = cands[:0]
		rollActive := false
		err := s.db.View(func(tx *bolt.Tx) error {
			active := getU32(tx.Bucket(bucketMeta).Get(keySegActive))
			return tx.Bucket(bucketSegs).ForEach(func(k, v []byte) error {
				si, ok := decodeSegInfo(v)
				if !ok || len(k) != 4 {
					return nil
				}
				id := binary.BigEndian.Uint32(k)
				if dead := si.dead(); dead > 0 && float64(dead) >= minGarbage*float64(dead+si.liveBytes) {
					if id == active {
						rollActive = true
					} else {
						cands = append(cands, cand{id, si})
					}
				}
				return nil
			})
		})
		if err != nil {
			return res, err
		}
		if !rollActive || rolled {
			break
		}
		// The active segment is half garbage too: begin a new one, so
		// that it can be reclaimed like the others.
		if err := s.w.do([]mutation{{bucket: bucketSegs, kind: opRoll}}); err != nil {
			return res, err
		}
		rolled = true
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].si.dead() > cands[j].si.dead() })
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if budget > 0 && res.Rewritten+int64(c.si.liveBytes) > budget {
			continue
		}
		moved, err := s.reclaimSegment(ctx, c.id, c.si)
		res.Rewritten += moved
		if errors.Is(err, ErrBlockDamaged) && ctx.Err() == nil {
			// The segment keeps its damaged blocks; the others go on.
			damaged = append(damaged, err)
			continue
		}
		if err != nil {
			return res, err
		}
		// The commit that moved its last block removed it.
		var left bool
		if err := s.db.View(func(tx *bolt.Tx) error {
			left = tx.Bucket(bucketSegs).Get(segKey(c.id)) != nil
			return nil
		}); err != nil {
			return res, err
		}
		if !left {
			res.Segments++
			res.Freed += int64(c.si.end)
		}
	}
	n, err := s.GiveBackIndex()
	res.IndexFreed = n
	return res, errors.Join(append(damaged, err)...)
}

// reclaimSegment moves the live blocks of segment id to the active
// segment and returns the bytes it moved.
func (s *Store) reclaimSegment(ctx context.Context, id uint32, si segInfo) (int64, error) {
	if si.liveN == 0 {
		// Emptied while it was the active segment: a commit that looks
		// at it removes it.
		return 0, s.w.do([]mutation{{bucket: bucketSegs, kind: opDel, key: segKey(id)}})
	}
	f, err := os.Open(s.sf.name(id))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var moved int64
	var batch []mutation
	var damaged []error
	size := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		// Only blocks the index still points to here move; the writer
		// checks again, in the commit.
		live := batch[:0]
		if err := s.db.View(func(tx *bolt.Tx) error {
			idx, err := loadIndex(tx)
			if err != nil {
				return err
			}
			for _, m := range batch {
				cur, ok := decodeLoc(idx.get(m.key))
				if !ok || !cur.samePlace(m.from) {
					continue
				}
				// A damaged block stays where it is: moved, its bytes
				// would get a new checksum and pass for sound.
				if !intact(m.key, cur, m.val) {
					damaged = append(damaged, fmt.Errorf("%w: block %x in segment %d: its bytes on disk no longer match its hash", ErrBlockDamaged, m.key, id))
					continue
				}
				live = append(live, m)
			}
			return nil
		}); err != nil {
			return err
		}
		if len(live) > 0 {
			before, start := s.w.submitted.Load(), time.Now()
			if err := s.w.do(live); err != nil {
				return err
			}
			if s.w.submitted.Load()-before > 1 {
				// Others wrote meanwhile (adds): leave the writer to
				// them for a while.
				select {
				case <-time.After(YieldFor(time.Since(start))):
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		for _, m := range live {
			moved += int64(len(m.val))
		}
		batch, size = nil, 0
		return ctx.Err()
	}
	err = scanRecords(f, segHeader, int64(si.end), func(key, data []byte, off int64) error {
		batch = append(batch, mutation{
			bucket: bucketBlocks, kind: opMove,
			key:  append([]byte(nil), key...),
			val:  append([]byte(nil), data...),
			from: loc{seg: id, off: uint32(off), n: uint32(len(data))},
		})
		size += len(key) + len(data)
		if size >= reclaimChunk {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	return moved, errors.Join(append([]error{err}, damaged...)...)
}

// PunchRemoved gives back, without writing a byte, the space of removed
// blocks in every segment: holes over the data of each record no index
// entry points to (its header and key stay, so the records still read
// in order), and the active segment cut back to the end of its last
// acknowledged record (the bytes of a write that failed). It is what
// still frees space on a full disk, where Reclaim cannot copy live
// blocks out: after a failed add's blocks were removed again, and after
// GC's deletes. The segments keep their counts, so Reclaim still
// rewrites them once there is room (what it copies is the live blocks
// only). It returns the bytes the files take less on disk (0 where holes
// are not supported).
func (s *Store) PunchRemoved() (int64, error) {
	if s.w == nil {
		return 0, errors.New("storage: store is read-only")
	}
	r := &request{giveBack: true, punch: true, done: make(chan error, 1)}
	if err := s.w.submit(context.Background(), r); err != nil {
		return 0, err
	}
	err := <-r.done
	return r.gaveBack, err
}

// punchRemoved is PunchRemoved on the writer goroutine (no write runs,
// so the index and the segments' ends hold still).
func (w *writer) punchRemoved() (int64, error) {
	a := w.app
	var freed int64 // by cutting the active segment back
	fi, err := a.f.Stat()
	if err != nil {
		return 0, err
	}
	if fi.Size() > a.end {
		if err := a.f.Truncate(a.end); err != nil {
			return 0, err
		}
		cut, err := a.f.Stat()
		if err != nil {
			return 0, err
		}
		freed = max(0, allocatedBytes(fi)-allocatedBytes(cut))
	}
	var segs []segEnd
	if err := w.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSegs).ForEach(func(k, v []byte) error {
			si, ok := decodeSegInfo(v)
			if !ok || len(k) != 4 {
				return nil
			}
			id := binary.BigEndian.Uint32(k)
			switch {
			case id == a.id:
				// Past its indexed end: acknowledged, not yet indexed.
				segs = append(segs, segEnd{id, a.end})
			case si.dead() > 0:
				segs = append(segs, segEnd{id, int64(si.end)})
			}
			return nil
		})
	}); err != nil {
		return freed, err
	}
	for _, sg := range segs {
		n, err := w.punchSegment(sg.id, sg.end)
		freed += n
		if err != nil {
			return freed, err
		}
	}
	return freed, nil
}

type segEnd struct {
	id  uint32
	end int64
}

// punchSegment punches holes over the data of segment id's removed
// records up to end and returns the bytes the file takes less on disk.
func (w *writer) punchSegment(id uint32, end int64) (int64, error) {
	f, err := os.Open(w.sf.name(id))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	const page = 4096
	var dead [][2]int64 // [from, to) of whole pages inside removed records' data
	err = w.db.View(func(tx *bolt.Tx) error {
		idx, err := loadIndex(tx)
		if err != nil {
			return err
		}
		return scanRecords(f, segHeader, end, func(key, data []byte, off int64) error {
			if len(key) >= 2 && key[0] == 0 && key[1] == 0 {
				return nil // a datastore record (dslog.go)
			}
			here := loc{seg: id, off: uint32(off), n: uint32(len(data))}
			if l, ok := w.mem.get(key); ok && l.samePlace(here) {
				return nil
			}
			if l, ok := decodeLoc(idx.get(key)); ok && l.samePlace(here) {
				return nil
			}
			if from, to := (off+page-1)/page*page, (off+int64(len(data)))/page*page; to > from {
				dead = append(dead, [2]int64{from, to})
			}
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	return punchSpans(w.sf.name(id), dead)
}

// punchSpans punches holes over the byte spans [from, to) of the file
// at name and returns the bytes it takes less on disk (0 where the file
// system cannot).
func punchSpans(name string, spans [][2]int64) (int64, error) {
	if len(spans) == 0 {
		return 0, nil
	}
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return 0, err
	}
	for _, sp := range spans {
		if ok, err := punchHole(f, sp[0], sp[1]-sp[0]); err != nil || !ok {
			return 0, err
		}
	}
	after, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return max(0, allocatedBytes(before)-allocatedBytes(after)), nil
}
