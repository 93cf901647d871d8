package status

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"cairn/modules/httpapp"
	"cairn/modules/modapi"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/page-*.html")

// The page's HTML, byte for byte, for an offline node, an online one
// with a StorageMax and the result of an add, a failed add, and values
// that need escaping (the goldens were rendered by the html/template
// version of the page, which the plain writer replaced).
func TestStatus_Page_Golden(t *testing.T) {
	base := pageData{ID: "12D3KooWExample", Peers: 0, Base: "/status", Version: "0.1.0", Now: "2026-11-24 10:00:00 UTC",
		Chart: `<svg class="chart"></svg>`}
	online := base
	online.Peers, online.Networking = 1, true
	online.Repo = modapi.RepoStat{Pins: 1, NumBlocks: 3, UsedBytes: 12345, StorageMax: 10 << 20, WrittenBytes: 5 << 20, LifetimeWrittenBytes: 3 << 30}
	online.Memory = modapi.MemoryStat{Budget: 256 << 20, Used: 30 << 20, Headroom: 226 << 20}
	online.MemPct = 11.71875
	online.UsedPct = 12.345
	online.IPFSBase = "/ipfs"
	online.Apps = []httpapp.AppInfo{{Name: "ipfs", Module: "http_ipfs", Base: "/ipfs", Home: "/ipfs/"}, {Name: "api", Module: "http_api", Base: "/api"}}
	online.Added = &added{Name: "hello.txt", Cid: "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o", Size: 12}
	failed := base
	failed.Peers = 2
	failed.Repo = modapi.RepoStat{Pins: 2, NumBlocks: 1}
	failed.RepoErr = "repo: <closed> & \"gone\""
	failed.Memory = modapi.MemoryStat{Budget: 64 << 20, Used: 80 << 20, Headroom: -16 << 20}
	failed.MemPct = 100
	failed.Added = &added{Err: `bad file: <script>alert('x')</script>`}
	odd := online
	odd.ID = `<b>"id"</b>`
	odd.Base = `/st atus"x`
	odd.IPFSBase = `/ip fs/"é"`
	odd.Apps = []httpapp.AppInfo{{Name: `<i>wiki</i>`, Module: `mod"x"`, Base: `/w iki`, Home: `/w iki/"é"`}}
	odd.Added = &added{Name: `a<b>&c "d" 'e'.txt`, Cid: `Qm"x"`, Size: 1 << 30}
	odd.Version = `v<1>`
	odd.Memory = modapi.MemoryStat{Used: 7 << 20}
	for name, d := range map[string]pageData{"offline": base, "online": online, "failed": failed, "escaped": odd} {
		got := d.html()
		file := filepath.Join("testdata", "page-"+name+".html")
		if *updateGolden {
			if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s: page differs from %s:\n%s", name, file, got)
		}
	}
}
