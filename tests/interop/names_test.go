//go:build interop

// names_test.go: IPNS between cairn and Kubo over their loopback LAN DHT:
// a name published on one resolves on the other, and a key exported by
// Kubo imports into cairn and publishes the same name.

package interop

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cairn/internal/daemon"
)

// publishName runs name/publish on d and returns the name.
func publishName(t *testing.T, d *daemon.Daemon, value string, q url.Values) string {
	t.Helper()
	if q == nil {
		q = url.Values{}
	}
	q.Set("arg", value)
	q.Set("timeout", "90s")
	var out struct{ Name, Value string }
	if err := d.JSON("name/publish", q, &out); err != nil {
		t.Fatalf("%s name/publish %s: %v", d.Name, value, err)
	}
	if out.Value != value {
		t.Fatalf("%s name/publish: value %q, want %q", d.Name, out.Value, value)
	}
	return out.Name
}

// resolveName runs name/resolve on d (no cache) and returns the path.
func resolveName(t *testing.T, d *daemon.Daemon, name string) string {
	t.Helper()
	var out struct{ Path string }
	err := d.JSON("name/resolve", url.Values{"arg": {name}, "nocache": {"true"}, "timeout": {"90s"}}, &out)
	if err != nil {
		t.Fatalf("%s name/resolve %s: %v", d.Name, name, err)
	}
	return out.Path
}

func TestInterop_IPNSBothWays(t *testing.T) {
	c := startCairn(t, daemon.Options{})
	k := startKubo(t, daemon.Options{})
	connect(t, c, k)
	time.Sleep(time.Second) // both LAN DHT tables learn the other

	_, hk := add(t, k, nil, file{Path: "k.txt", Data: []byte("named on Kubo\n")})
	nk := publishName(t, k, "/ipfs/"+hk, nil)
	if got := resolveName(t, c, nk); got != "/ipfs/"+hk {
		t.Errorf("cairn resolves Kubo's name %s to %q, want /ipfs/%s", nk, got, hk)
	}

	_, hc := add(t, c, nil, file{Path: "c.txt", Data: []byte("named on cairn\n")})
	nc := publishName(t, c, "/ipfs/"+hc, nil)
	if got := resolveName(t, k, nc); got != "/ipfs/"+hc {
		t.Errorf("Kubo resolves cairn's name %s to %q, want /ipfs/%s", nc, got, hc)
	}
	// And through content paths.
	if got := cat(t, k, "/ipns/"+nc); string(got) != "named on cairn\n" {
		t.Errorf("Kubo cat /ipns/%s: %q", nc, got)
	}
}

func TestInterop_KuboKeyImportsIntoCairn(t *testing.T) {
	c := startCairn(t, daemon.Options{})
	k := startKubo(t, daemon.Options{})
	connect(t, c, k)
	time.Sleep(time.Second)

	var gen struct{ Name, Id string }
	if err := k.JSON("key/gen", url.Values{"arg": {"shared"}}, &gen); err != nil {
		t.Fatal(err)
	}
	// key export is CLI-only on both; Kubo's reads its keystore while the daemon runs.
	dir := t.TempDir()
	for _, format := range []string{"libp2p-protobuf-cleartext", "pem-pkcs8-cleartext"} {
		out := filepath.Join(dir, format)
		if _, err := k.CLI("key", "export", "shared", "-f", format, "-o", out); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		w, _ := mw.CreateFormFile("key", "key")
		w.Write(data)
		mw.Close()
		name := "shared-" + strings.SplitN(format, "-", 2)[0]
		b, err := c.Post("key/import", url.Values{"arg": {name}, "format": {format}}, &body, mw.FormDataContentType())
		if err != nil {
			t.Fatalf("cairn key/import (%s): %v", format, err)
		}
		var imp struct{ Name, Id string }
		if err := json.Unmarshal(b, &imp); err != nil {
			t.Fatal(err)
		}
		if imp.Id != gen.Id {
			t.Errorf("cairn imported Kubo's key (%s) as %s, Kubo says %s", format, imp.Id, gen.Id)
		}
	}
	// cairn publishes under the imported key: the same name as Kubo's key.
	_, hc := add(t, c, nil, file{Path: "s.txt", Data: []byte("one key, two nodes\n")})
	n := publishName(t, c, "/ipfs/"+hc, url.Values{"key": {"shared-libp2p"}})
	if n != gen.Id {
		t.Errorf("cairn published %s with Kubo's key, want %s", n, gen.Id)
	}
	if got := resolveName(t, k, n); got != "/ipfs/"+hc {
		t.Errorf("Kubo resolves %s to %q, want /ipfs/%s", n, got, hc)
	}
	// And the reverse direction: cairn's export imports into Kubo.
	out := filepath.Join(dir, "cairn.key")
	var cg struct{ Name, Id string }
	if err := c.JSON("key/gen", url.Values{"arg": {"fromcairn"}}, &cg); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CLI("key", "export", "fromcairn", "-o", out); err != nil {
		t.Fatal(err)
	}
	if s, err := k.CLI("key", "import", "fromcairn", out); err != nil || strings.TrimSpace(s) != cg.Id {
		t.Errorf("Kubo key import of cairn's export: %q %v, want %s", s, err, cg.Id)
	}
}
