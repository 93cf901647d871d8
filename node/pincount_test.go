package node_test

import (
	"context"
	"testing"

	"cairn/internal/testutil"
)

// Ensure Pins.Count counts recursive and direct pins, and drops a removed
// one (the status page's pin figure).
func TestPinCount(t *testing.T) {
	ctx := context.Background()
	n := testutil.MustOpenNode(t)
	count := func() int {
		t.Helper()
		c, err := n.Pins().Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if got := count(); got != 0 {
		t.Fatalf("empty repo: %d pins", got)
	}
	rec := addData(t, n, []byte("pinned recursively"), true)
	direct := addData(t, n, []byte("pinned directly"), false)
	addData(t, n, []byte("not pinned"), false)
	if err := n.Pins().Add(ctx, direct, false, "", nil); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != 2 {
		t.Fatalf("%d pins, want 2", got)
	}
	if err := n.Pins().Remove(ctx, rec, true); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != 1 {
		t.Fatalf("after unpin: %d pins, want 1", got)
	}
}
