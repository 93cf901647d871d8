// readfile.go: copying large block values out of the store file with
// pread instead of faulting bbolt's memory map (see "Reads" in doc.go).

package storage

import (
	"os"
	"sync"
	"unsafe"

	bolt "go.etcd.io/bbolt"
)

// preadMin is the smallest value read with pread: values that fit in one
// page cost at most one fault either way.
const preadMin = 8 << 10

// fileReader reads committed values from the store file by offset.
type fileReader struct {
	f    *os.File
	bufs sync.Pool // *[]byte
}

func newFileReader(path string) (*fileReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r := &fileReader{f: f}
	adviseSequential(f)
	return r, nil
}

func (r *fileReader) close() error { return r.f.Close() }

// offset returns where v, a value of tx, sits in the file, or false when v
// is not inside the map (it always is in a read transaction).
func offset(db *bolt.DB, tx *bolt.Tx, v []byte) (int64, bool) {
	base := db.Info().Data
	off := int64(uintptr(unsafe.Pointer(unsafe.SliceData(v))) - base)
	if off < 0 || off+int64(len(v)) > tx.Size() {
		return 0, false
	}
	return off, true
}

// readInto copies v, a value of read transaction tx, into dst (len(dst)
// == len(v)) with pread. The transaction keeps v's pages from being
// reused, so the file holds exactly v's bytes there. It returns false
// when it did not copy (small value, not in the map, read error): the
// caller uses v.
func (r *fileReader) readInto(db *bolt.DB, tx *bolt.Tx, v, dst []byte) bool {
	if r == nil || len(v) < preadMin {
		return false
	}
	off, ok := offset(db, tx, v)
	if !ok {
		return false
	}
	n, err := r.f.ReadAt(dst[:len(v)], off)
	return err == nil && n == len(v)
}

// view calls fn with v's bytes: a pooled copy read with pread for large
// values, v itself otherwise.
func (r *fileReader) view(db *bolt.DB, tx *bolt.Tx, v []byte, fn func([]byte) error) error {
	if r == nil || len(v) < preadMin {
		return fn(v)
	}
	bp, _ := r.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	if cap(*bp) < len(v) {
		*bp = make([]byte, len(v))
	}
	buf := (*bp)[:len(v)]
	defer r.bufs.Put(bp)
	if !r.readInto(db, tx, v, buf) {
		return fn(v)
	}
	return fn(buf)
}
