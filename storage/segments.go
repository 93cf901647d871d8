// segments.go: the append-only segment files that hold block bytes, and
// the locations the index keeps for them.

package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// segMagic opens every segment file.
const segMagic = "cairnSG1"

// segHeader is the size of a segment file's header (segMagic).
const segHeader = int64(len(segMagic))

// DefaultSegmentBytes is the size past which the writer starts a new
// segment file (a single larger batch still goes whole into one).
const DefaultSegmentBytes = 64 << 20

// A record in a segment is
//
//	uint32 big-endian data length | uint8 key length | key | data
//
// and the index points at its data. The key makes a segment readable on
// its own: reclaiming a segment walks its records and asks the index
// which are still live.
const recHeader = 5

// loc is where a block's bytes sit: segment id, offset of the data in the
// segment file, and length, and (sum, when hasSum) the CRC-32C of those
// bytes. Encoded big-endian in the index: 12 bytes without the sum (what
// schema 3 wrote), 16 with it (every entry written since).
type loc struct {
	seg    uint32
	off    uint32
	n      uint32
	sum    uint32
	hasSum bool
}

const (
	locLen    = 12
	locSumLen = 16
)

// summed returns l with the CRC-32C of data, the bytes it locates.
func (l loc) summed(data []byte) loc {
	l.sum, l.hasSum = crc32.Checksum(data, crcTable), true
	return l
}

// samePlace reports whether l and o locate the same bytes (whatever
// their sums).
func (l loc) samePlace(o loc) bool { return l.seg == o.seg && l.off == o.off && l.n == o.n }

func (l loc) encode() []byte {
	n := locLen
	if l.hasSum {
		n = locSumLen
	}
	b := make([]byte, n)
	binary.BigEndian.PutUint32(b[0:], l.seg)
	binary.BigEndian.PutUint32(b[4:], l.off)
	binary.BigEndian.PutUint32(b[8:], l.n)
	if l.hasSum {
		binary.BigEndian.PutUint32(b[12:], l.sum)
	}
	return b
}

func decodeLoc(b []byte) (loc, bool) {
	if len(b) != locLen && len(b) != locSumLen {
		return loc{}, false
	}
	l := loc{
		seg: binary.BigEndian.Uint32(b[0:]),
		off: binary.BigEndian.Uint32(b[4:]),
		n:   binary.BigEndian.Uint32(b[8:]),
	}
	if len(b) == locSumLen {
		l.sum, l.hasSum = binary.BigEndian.Uint32(b[12:]), true
	}
	return l, true
}

// segInfo is a segment's entry in "segs": the end of its last committed
// record, and the count of the blocks the index points to in it and the
// bytes of their records (headers and keys included).
type segInfo struct {
	end       uint64
	liveN     uint64
	liveBytes uint64
}

func (si segInfo) encode() []byte {
	b := make([]byte, 24)
	binary.BigEndian.PutUint64(b[0:], si.end)
	binary.BigEndian.PutUint64(b[8:], si.liveN)
	binary.BigEndian.PutUint64(b[16:], si.liveBytes)
	return b
}

func decodeSegInfo(b []byte) (segInfo, bool) {
	if len(b) != 24 {
		return segInfo{}, false
	}
	return segInfo{
		end:       binary.BigEndian.Uint64(b[0:]),
		liveN:     binary.BigEndian.Uint64(b[8:]),
		liveBytes: binary.BigEndian.Uint64(b[16:]),
	}, true
}

// dead is the bytes of records no block points to any more.
func (si segInfo) dead() uint64 {
	used := uint64(segHeader) + si.liveBytes
	if si.end < used {
		return 0
	}
	return si.end - used
}

func segKey(id uint32) []byte {
	b := make([]byte, 4)
	binary.BigEndian.PutUint32(b, id)
	return b
}

// SegmentDir is the directory of segment files that belongs to the index
// file at path ("blocks.db" keeps its segments in "blocks.segs").
func SegmentDir(path string) string {
	return strings.TrimSuffix(path, ".db") + ".segs"
}

// segFiles are the open segment files of a store. Readers hold mu shared
// while they read; removing a segment takes it exclusively, so no read
// ever meets a closed or reused descriptor.
type segFiles struct {
	dir string
	mu  sync.RWMutex
	fds map[uint32]*os.File
}

// maxOpenSegs bounds the descriptors kept open; past it all are closed
// and reopened as reads need them.
const maxOpenSegs = 512

func newSegFiles(dir string) *segFiles {
	return &segFiles{dir: dir, fds: map[uint32]*os.File{}}
}

func (sf *segFiles) name(id uint32) string {
	return filepath.Join(sf.dir, fmt.Sprintf("%08d.seg", id))
}

// file returns the descriptor of segment id, opening it read-only.
// Callers hold mu shared.
func (sf *segFiles) file(id uint32) (*os.File, error) {
	if f, ok := sf.fds[id]; ok {
		return f, nil
	}
	// Upgrade: open under the exclusive lock, then go back to shared.
	sf.mu.RUnlock()
	sf.mu.Lock()
	f, ok := sf.fds[id]
	var err error
	if !ok {
		if len(sf.fds) >= maxOpenSegs {
			for k, g := range sf.fds {
				g.Close()
				delete(sf.fds, k)
			}
		}
		f, err = os.Open(sf.name(id))
		if err == nil {
			adviseSequential(f)
			sf.fds[id] = f
		}
	}
	sf.mu.Unlock()
	sf.mu.RLock()
	if err != nil {
		return nil, err
	}
	if g, ok := sf.fds[id]; ok {
		return g, nil
	}
	// Closed again by a concurrent eviction: the caller tries again.
	return nil, errEvicted
}

var errEvicted = errors.New("storage: segment descriptor evicted")

// readAt copies l's bytes into dst (len(dst) == l.n).
func (sf *segFiles) readAt(l loc, dst []byte) error {
	for try := 0; ; try++ {
		sf.mu.RLock()
		f, err := sf.file(l.seg)
		if err == nil {
			_, err = f.ReadAt(dst, int64(l.off))
		}
		sf.mu.RUnlock()
		if errors.Is(err, errEvicted) && try < 3 {
			continue
		}
		if errors.Is(err, io.EOF) || errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: segment %d holds no %d bytes at %d", errGone, l.seg, l.n, l.off)
		}
		return err
	}
}

// errGone: the segment or the record was removed after the lookup (a
// concurrent delete); readers answer not found.
var errGone = errors.New("storage: block removed while read")

// remove closes and unlinks segment files that no longer hold a live
// block (after the commit that emptied them).
func (sf *segFiles) remove(ids []uint32) error {
	if len(ids) == 0 {
		return nil
	}
	sf.mu.Lock()
	var errs []error
	for _, id := range ids {
		if f, ok := sf.fds[id]; ok {
			f.Close()
			delete(sf.fds, id)
		}
		if err := os.Remove(sf.name(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	sf.mu.Unlock()
	return errors.Join(append(errs, syncDir(sf.dir))...)
}

func (sf *segFiles) closeAll() {
	sf.mu.Lock()
	for id, f := range sf.fds {
		f.Close()
		delete(sf.fds, id)
	}
	sf.mu.Unlock()
}

// list returns the ids of the segment files in the directory.
func (sf *segFiles) list() ([]uint32, error) {
	ents, err := os.ReadDir(sf.dir)
	if err != nil {
		return nil, err
	}
	var ids []uint32
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".seg")
		if !ok {
			continue
		}
		id, err := strconv.ParseUint(name, 10, 32)
		if err != nil {
			continue
		}
		ids = append(ids, uint32(id))
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// appender writes records at the end of the active segment. It is used
// by the writer goroutine only; what it wrote counts once the
// transaction that indexes it commits.
type appender struct {
	sf     *segFiles
	f      *os.File // the active segment, open for writing
	id     uint32
	end    int64 // committed end of the active segment
	maxSeg int64

	iov  [][]byte
	hdrs []byte
}

// openAppender opens segment id for writing, cutting it to end (bytes past
// the last committed record are a commit that never happened).
func openAppender(sf *segFiles, id uint32, end int64, maxSeg int64) (*appender, error) {
	a := &appender{sf: sf, maxSeg: maxSeg}
	if err := a.open(id, end); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *appender) open(id uint32, end int64) error {
	f, err := os.OpenFile(a.sf.name(id), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if end <= segHeader && fi.Size() < segHeader {
		if _, err := f.WriteAt([]byte(segMagic), 0); err != nil {
			f.Close()
			return err
		}
		end = segHeader
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		if err := syncDir(a.sf.dir); err != nil {
			f.Close()
			return err
		}
	} else {
		var m [len(segMagic)]byte
		if _, err := f.ReadAt(m[:], 0); err != nil || string(m[:]) != segMagic {
			f.Close()
			return fmt.Errorf("%w: segment %s has no header", ErrCorrupt, a.sf.name(id))
		}
		if fi.Size() < end {
			f.Close()
			return fmt.Errorf("%w: segment %s is %d bytes, the index says %d", ErrCorrupt, a.sf.name(id), fi.Size(), end)
		}
	}
	if fi.Size() > end {
		if err := f.Truncate(end); err != nil {
			f.Close()
			return err
		}
	}
	if a.f != nil {
		a.f.Close()
	}
	a.f, a.id, a.end = f, id, end
	return nil
}

func (a *appender) close() {
	if a.f != nil {
		a.f.Close()
		a.f = nil
	}
}

// pendingRec is a record to append: its key and data.
type pendingRec struct {
	key, data []byte
	at        loc  // filled by write
	move      bool // an indexed block moving (reclaim.go)
}

func recSize(key, data []byte) int64 { return recHeader + int64(len(key)) + int64(len(data)) }

// write appends recs, starting new segments when the active one is full,
// and syncs every file it wrote. It fills each record's loc and returns
// the segments it started (their ids in order) and the new end of the
// active one; nothing in a is changed until commit.
type appendPlan struct {
	started []uint32 // segments begun by this write (the last is active)
	ends    map[uint32]int64
	bytes   int64
}

func (a *appender) write(recs []*pendingRec, roll bool, nextID func() uint32) (*appendPlan, error) {
	plan := &appendPlan{ends: map[uint32]int64{}}
	f, id, end := a.f, a.id, a.end
	if roll && end > segHeader {
		end = a.maxSeg // begin the next segment first
	}
	var files []*os.File
	defer func() {
		for _, g := range files {
			if g != a.f {
				g.Close()
			}
		}
	}()
	i := 0
	for i < len(recs) || (roll && len(plan.started) == 0 && end >= a.maxSeg) {
		// Take the records that fit in this segment (at least one).
		j := i
		size := int64(0)
		for j < len(recs) {
			rs := recSize(recs[j].key, recs[j].data)
			if j > i && end+size+rs > a.maxSeg {
				break
			}
			if j == i && end > segHeader && end+rs > a.maxSeg {
				break
			}
			size += rs
			j++
		}
		if j == i {
			// The active segment is full: begin the next one.
			nid := nextID()
			g, err := os.OpenFile(a.sf.name(nid), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
			if err != nil {
				return nil, err
			}
			files = append(files, g)
			if _, err := g.WriteAt([]byte(segMagic), 0); err != nil {
				return nil, err
			}
			if err := syncDir(a.sf.dir); err != nil {
				return nil, err
			}
			f, id, end = g, nid, segHeader
			plan.started = append(plan.started, nid)
			continue
		}
		if err := a.pwrite(f, recs[i:j], id, end); err != nil {
			return nil, err
		}
		end += size
		plan.bytes += size
		plan.ends[id] = end
		if err := fdatasync(f); err != nil {
			return nil, err
		}
		i = j
	}
	return plan, nil
}

// commit makes plan's segments the appender's state, after the index
// transaction that points into them committed.
func (a *appender) commit(plan *appendPlan) error {
	if len(plan.started) > 0 {
		last := plan.started[len(plan.started)-1]
		end, ok := plan.ends[last]
		if !ok {
			end = segHeader // begun and left empty (a roll)
		}
		if err := a.open(last, end); err != nil {
			return err
		}
		return nil
	}
	if e, ok := plan.ends[a.id]; ok {
		a.end = e
	}
	return nil
}

// pwrite writes recs at off of f with as few system calls as the iovec
// limit allows, filling their locations.
func (a *appender) pwrite(f *os.File, recs []*pendingRec, id uint32, off int64) error {
	const maxIov = 1020
	a.hdrs = a.hdrs[:0]
	for _, r := range recs {
		a.hdrs = binary.BigEndian.AppendUint32(a.hdrs, uint32(len(r.data)))
		a.hdrs = append(a.hdrs, byte(len(r.key)))
	}
	a.iov = a.iov[:0]
	pos := off
	start := off
	for k, r := range recs {
		a.iov = append(a.iov, a.hdrs[k*recHeader:(k+1)*recHeader], r.key, r.data)
		r.at = loc{seg: id, off: uint32(pos + recHeader + int64(len(r.key))), n: uint32(len(r.data))}.summed(r.data)
		pos += recSize(r.key, r.data)
		if len(a.iov) >= maxIov || k == len(recs)-1 {
			if err := pwritevAll(f, a.iov, start); err != nil {
				return err
			}
			start = pos
			a.iov = a.iov[:0]
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// scanRecords calls fn for each record of segment file f from start (a
// record's first byte) up to end, with the offset of its data; key and
// data are valid during the call only.
func scanRecords(f *os.File, start, end int64, fn func(key, data []byte, dataOff int64) error) error {
	const chunk = 1 << 20
	buf := make([]byte, 0, chunk)
	pos := start
	var bufAt int64 = -1
	for pos < end {
		// Make sure the header, key and data sit in buf.
		need := func(n int64) ([]byte, error) {
			if bufAt >= 0 && pos >= bufAt && pos+n <= bufAt+int64(len(buf)) {
				return buf[pos-bufAt : pos-bufAt+n], nil
			}
			size := max(n, chunk)
			if pos+size > end {
				size = end - pos
			}
			if size < n {
				return nil, fmt.Errorf("%w: segment %s: record at %d runs past its end %d", ErrCorrupt, f.Name(), pos, end)
			}
			if int64(cap(buf)) < size {
				buf = make([]byte, size)
			}
			buf = buf[:size]
			if _, err := f.ReadAt(buf, pos); err != nil {
				return nil, err
			}
			bufAt = pos
			return buf[:n], nil
		}
		h, err := need(recHeader)
		if err != nil {
			return err
		}
		dn := int64(binary.BigEndian.Uint32(h))
		kn := int64(h[4])
		rec, err := need(recHeader + kn + dn)
		if err != nil {
			return err
		}
		if err := fn(rec[recHeader:recHeader+kn], rec[recHeader+kn:], pos+recHeader+kn); err != nil {
			return err
		}
		pos += recHeader + kn + dn
	}
	return nil
}
