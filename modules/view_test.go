package modules_test

import (
	"context"
	"testing"

	"cairn/internal/testutil"
	"cairn/modules"
	"cairn/node/config"
)

// The status page reads the cap the writes enforce: every StorageMax form
// Kubo accepts shows up, not only the ones a strict parser takes.
func TestView_Repo_StorageMaxForms(t *testing.T) {
	n := testutil.MustOpenNode(t)
	v := modules.ViewOf(n)
	for _, tc := range []struct {
		in   string
		want int64
	}{{"200K", 200_000}, {"10G", 10_000_000_000}, {"10gb", 10_000_000_000}, {"10 GB", 10_000_000_000}, {"", 0}} {
		if err := n.ConfigFile().Update(func(doc map[string]any) error {
			return config.SetKey(doc, "Datastore.StorageMax", tc.in)
		}); err != nil {
			t.Fatal(err)
		}
		rs, err := v.Repo(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rs.StorageMax != tc.want || int64(n.Storage().Max()) != tc.want {
			t.Errorf("StorageMax %q: status page %d, cap %d, want %d", tc.in, rs.StorageMax, n.Storage().Max(), tc.want)
		}
	}
}
