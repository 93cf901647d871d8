package commands_test

import (
	"testing"

	"cairn/internal/testutil"
)

// Ensure repo/gc stops when its client hangs up: no more blocks removed.
func TestHangup_StopsGC(t *testing.T) {
	n := testutil.MustOpenNode(t)
	srv := testutil.StartServer(t, n)
	wideDAG(t, n, 400, 1000) // unpinned: all garbage
	hangupMidway(t, srv, httpPost("repo/gc?silent=true", nil, ""), "CollectGarbage", storedBlocks(n))
	if st, _ := n.Store.Stat(); st.NumBlocks == 0 {
		t.Fatal("GC removed every block although its client left")
	}
}
