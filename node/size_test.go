package node_test

import (
	"testing"

	"cairn/internal/testutil"
)

func TestNode_StorageMax_FromConfig(t *testing.T) {
	n := testutil.MustOpenNode(t)
	for _, tc := range []struct {
		in   string
		want uint64
	}{{"200K", 200_000}, {"10 GB", 10_000_000_000}, {"10gb", 10_000_000_000}} {
		testutil.SetConfig(t, n, map[string]any{"Datastore.StorageMax": tc.in})
		if got := n.Storage().Max(); got != tc.want {
			t.Errorf("StorageMax with %q: got %d, want %d", tc.in, got, tc.want)
		}
	}
}
