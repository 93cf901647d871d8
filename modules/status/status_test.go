package status_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"cairn/internal/testutil"
	"cairn/modules"
	"cairn/node/config"
)

func startStatus(t *testing.T, allowWrite bool) string {
	t.Helper()
	return startStatusWith(t, func(c *config.ModulesConfig) {
		if !allowWrite {
			c.AllowWrite = nil
		}
	})
}

func startStatusWith(t *testing.T, edit func(*config.ModulesConfig)) string {
	t.Helper()
	n := testutil.MustOpenNode(t)
	cfg := config.DefaultModules()
	cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{0}
	edit(&cfg)
	h, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo, Log: slog.New(slog.DiscardHandler), Gateway: testutil.Gateway(t, n)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h.Listeners()[0].URL()
}

func form(t *testing.T, name string, content []byte) (*bytes.Buffer, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	fw, _ := w.CreateFormFile("file", name)
	fw.Write(content)
	w.Close()
	return &b, w.FormDataContentType()
}

func post(t *testing.T, url string, hdr ...string) (int, string) {
	t.Helper()
	body, ct := form(t, "hello.txt", []byte("hello world\n"))
	req, _ := http.NewRequest("POST", url, body)
	req.Header.Set("Content-Type", ct)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestStatus_Upload_AddsAndShowsCID(t *testing.T) {
	u := startStatus(t, true)
	code, body := post(t, u+"/status/")
	// "hello world\n" is Kubo's well-known QmT78z... CID.
	if code != 200 || !strings.Contains(body, `id="cid">QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o<`) || !strings.Contains(body, `id="pins">1<`) {
		t.Errorf("upload: %d %.300q", code, body)
	}
	if code, body := post(t, u+"/status/", "Origin", "http://evil.example"); code != 403 || strings.Contains(body, "QmT78z") {
		t.Errorf("cross-site upload: %d", code)
	}
	if code, _ := post(t, u+"/status/", "Sec-Fetch-Site", "cross-site"); code != 403 {
		t.Errorf("cross-site (fetch metadata) upload: %d", code)
	}
}

func TestStatus_Upload_ReadOnlyView(t *testing.T) {
	u := startStatus(t, false)
	code, body := post(t, u+"/status/")
	if code != 400 || !strings.Contains(body, "read-only") {
		t.Errorf("upload without AllowWrite: %d %.200q", code, body)
	}
}

func TestStatus_Page_Contents(t *testing.T) {
	u := startStatus(t, true)
	resp, err := http.Get(u + "/status/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"<svg class=\"chart\"", "StorageMax", "This node is offline", `enctype="multipart/form-data"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(string(b), "<script") {
		t.Error("the page has a script")
	}
	if strings.Contains(string(b), `id="apps"`) {
		t.Error("the page lists apps with no other module loaded")
	}
}

// The status page links the other modules' apps, at their home paths.
func TestStatus_Page_LinksApps(t *testing.T) {
	u := startStatusWith(t, func(c *config.ModulesConfig) {
		c.Enabled = []string{"http_status", "http_ipfs"}
	})
	resp, err := http.Get(u + "/status/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(b)
	i := strings.Index(page, `<section id="apps">`)
	if i < 0 {
		t.Fatalf("no apps section: %.2000s", page)
	}
	apps := page[i : i+strings.Index(page[i:], "</section>")]
	if !strings.Contains(apps, `<a href="/ipfs/">`) || !strings.Contains(apps, "(http_ipfs)") || strings.Contains(apps, "http_status") {
		t.Errorf("apps section: %s; want a link to http_ipfs's home and not the status page itself", apps)
	}
}

// Ensure a DNS-rebinding page (evil.example resolving to 127.0.0.1, so
// Host and Origin are both evil.example:PORT) cannot upload: 403, no pin.
func TestStatus_Upload_DNSRebindingRefused(t *testing.T) {
	u := startStatus(t, true)
	port := u[strings.LastIndex(u, ":")+1:]
	body, ct := form(t, "x.txt", []byte("rebound\n"))
	req, _ := http.NewRequest("POST", u+"/status/", body)
	req.Host = "evil.example:" + port
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Origin", "http://evil.example:"+port)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("rebinding upload: %d, want 403", resp.StatusCode)
	}
	if _, page := get(t, u+"/status/", ""); !strings.Contains(page, `id="pins">0<`) {
		t.Errorf("something was pinned: %.400q", page)
	}
}

// Ensure that with Modules.Authorizations an anonymous upload is refused
// with a Basic challenge (browsers prompt) and pins nothing, and the same
// upload with the login works.
func TestStatus_Upload_NeedsLogin(t *testing.T) {
	u := startStatusWith(t, func(c *config.ModulesConfig) {
		c.Authorizations = map[string]*config.RPCAuthScope{"me": {AuthSecret: "basic:me:pw", AllowedPaths: []string{"/status"}}}
	})
	code, _ := post(t, u+"/status/")
	if code != 401 {
		t.Errorf("anonymous upload: %d, want 401", code)
	}
	if code, _ := get(t, u+"/status/", ""); code != 401 {
		t.Errorf("anonymous page: %d, want 401", code)
	}
	if _, page := get(t, u+"/status/", "Basic bWU6cHc="); !strings.Contains(page, `id="pins">0<`) {
		t.Errorf("the anonymous upload pinned something: %.400q", page)
	}
	if code, body := post(t, u+"/status/", "Authorization", "Basic bWU6cHc="); code != 200 || !strings.Contains(body, "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o") {
		t.Errorf("upload with the login: %d %.300q", code, body)
	}
}

// get returns the status and body of a GET with an optional
// Authorization value.
func get(t *testing.T, url, auth string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
