// handback.go: Handback, the part of a DAG service that gives a leaf's
// buffer back to the layout once the service no longer holds its bytes.

package unixfs

import (
	"sync"

	ipld "github.com/ipfs/go-ipld-format"
)

// Handback hands a leaf's buffer back to the layout once the DAG service
// no longer holds its bytes: the layout names the leaf it is about to add
// (Expect), and the service's Add of that node takes the callback (Take)
// and calls it when the bytes are no longer needed. A DAG service embeds
// it to be a Handbacker.
type Handback struct {
	mu   sync.Mutex
	node ipld.Node
	free func()
}

// Expect tells the service that the next Add of nd may give its buffer
// back by calling free.
func (h *Handback) Expect(nd ipld.Node, free func()) {
	h.mu.Lock()
	h.node, h.free = nd, free
	h.mu.Unlock()
}

// Take returns the callback expected for n, if any.
func (h *Handback) Take(n ipld.Node) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.node != n {
		return nil
	}
	f := h.free
	h.node, h.free = nil, nil
	return f
}
