// buffers.go: the large buffers of answers (a corked connection's, a
// pipe's), kept for the next answer in bounded lists. sync.Pool empties
// at every garbage collection, so under steady collection (a flood of
// peer work on a board near its memory target) each answer allocated its
// buffers anew, a few hundred KiB for a small cat, and paid the
// collector's assist for them on the client's time.

package rpc

// bufList keeps at most its capacity of buffers, each of cap at most max.
type bufList struct {
	free chan []byte
	max  int
}

func newBufList(n, max int) *bufList { return &bufList{free: make(chan []byte, n), max: max} }

// get returns an empty buffer of cap at least size: a kept one that is
// large enough, or a new one.
func (l *bufList) get(size int) []byte {
	select {
	case b := <-l.free:
		if cap(b) >= size {
			return b[:0]
		}
	default:
	}
	return make([]byte, 0, size)
}

// put keeps b for a later get, unless the list is full or b is larger
// than the list keeps.
func (l *bufList) put(b []byte) {
	if cap(b) > l.max {
		return
	}
	select {
	case l.free <- b[:0]:
	default:
	}
}

// corkBufs are corked connections' buffers: 4 of corkBytes (512 KiB)
// at most. pipeBufs are pipes' chunk buffers: 4 of at most 256 KiB, a
// block of the default chunker.
var (
	corkBufs = newBufList(4, corkBytes)
	pipeBufs = newBufList(4, 256<<10)
)
