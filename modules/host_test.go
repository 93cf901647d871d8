package modules_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cairn/internal/slogbridge"
	"cairn/internal/testutil"
	"cairn/modules"
	"cairn/node"
	"cairn/node/config"
	"cairn/rpc"

	logging "github.com/ipfs/go-log/v2"
)

func TestEnsureCert_GeneratesOnce(t *testing.T) {
	repo := t.TempDir()
	cfg := config.DefaultModules()
	gen, err := modules.EnsureCert(repo, cfg)
	if err != nil || !gen {
		t.Fatalf("first call: %v %v", gen, err)
	}
	b, err := os.ReadFile(filepath.Join(repo, "tls", "modules.crt"))
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.VerifyHostname("127.0.0.1"); err != nil {
		t.Errorf("certificate does not cover 127.0.0.1: %v", err)
	}
	if st, _ := os.Stat(filepath.Join(repo, "tls", "modules.key")); st.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v", st.Mode().Perm())
	}
	if gen, err := modules.EnsureCert(repo, cfg); err != nil || gen {
		t.Errorf("second call: %v %v, want no new certificate", gen, err)
	}
}

func TestHost_Start_HTTPSAndURLs(t *testing.T) {
	n := testutil.MustOpenNode(t)
	cfg := config.DefaultModules()
	cfg.Enabled = []string{"http_status", "no_such_module"}
	cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{0}
	h, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if got := h.Loaded(); len(got) != 1 || got[0] != "http_status" {
		t.Errorf("loaded: %v", got)
	}
	if h.Failed()["no_such_module"] == nil {
		t.Error("a missing module did not fail")
	}
	var httpsURL string
	for _, l := range h.Listeners() {
		if !strings.HasPrefix(l.Addr.String(), "127.0.0.1:") {
			t.Errorf("listener on %s, want loopback", l.Addr)
		}
		if l.Secure {
			httpsURL = l.URL()
		}
	}
	urls := strings.Join(h.URLs(), "\n")
	if httpsURL == "" || !strings.Contains(urls, "status: "+httpsURL+"/status/") {
		t.Fatalf("URLs %q, https %q", urls, httpsURL)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Get(httpsURL + "/status/health")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ok\n" || resp.TLS == nil {
		t.Errorf("https: %d %q", resp.StatusCode, b)
	}
	if err := h.Unload("http_status"); err != nil {
		t.Fatal(err)
	}
	resp, err = c.Get(httpsURL + "/status/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("after unload: %d, want 404", resp.StatusCode)
	}
}

func TestHost_Start_NothingEnabled(t *testing.T) {
	n := testutil.MustOpenNode(t)
	cfg := config.DefaultModules()
	cfg.Enabled = nil
	h, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Listeners()) != 0 || len(h.URLs()) != 0 {
		t.Errorf("listeners with nothing enabled: %v", h.Listeners())
	}
	if err := h.Close(); err != nil {
		t.Error(err)
	}
}

func TestHost_Start_BadConfig(t *testing.T) {
	n := testutil.MustOpenNode(t)
	cfg := config.DefaultModules()
	cfg.HTTP.Ports = []int{0}
	cfg.Lua.MaxRunTime = "soon"
	if _, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo}); err == nil || !strings.Contains(err.Error(), "Lua.MaxRunTime") {
		t.Errorf("got %v, want an error naming Lua.MaxRunTime", err)
	}
}

// Ensure the exposure rules: loopback listeners are free; a listener off
// loopback needs Modules.Authorizations (or AllowUnauthenticated), and so
// does a writing module on a node whose RPC is protected by no secret
// that may add (one that may is enough: the writing apps take it), and
// the message says how to fix it. Only documentation-prefix addresses appear; nothing
// listens on them.
func TestCheckExposure_Rules(t *testing.T) {
	auth := map[string]*config.RPCAuthScope{"me": {AuthSecret: "basic:me:pw", AllowedPaths: []string{"/"}}}
	rpcAdmin := rpc.NewAuth(map[string]*config.RPCAuthScope{"admin": {AuthSecret: "bearer:tok", AllowedPaths: []string{"/api/v0"}}})
	rpcCatOnly := rpc.NewAuth(map[string]*config.RPCAuthScope{"viewer": {AuthSecret: "basic:viewer:pw", AllowedPaths: []string{"/api/v0/cat"}}})
	for _, tc := range []struct {
		name string
		edit func(*config.ModulesConfig)
		api  rpc.Auth
		want string // "" = allowed
	}{
		{"default", nil, nil, ""},
		{"lan http", func(c *config.ModulesConfig) { c.HTTP.Interfaces = []string{"127.0.0.1", "192.0.2.1"} }, nil, "refusing to serve the modules on 192.0.2.1:5280 without protection"},
		{"wildcard https", func(c *config.ModulesConfig) { c.HTTPS.Interfaces = []string{"::"} }, nil, "on [::]:5281 without protection"},
		{"a name", func(c *config.ModulesConfig) { c.HTTP.Interfaces = []string{"pi.example"} }, nil, "on pi.example:5280"},
		{"lan with auth", func(c *config.ModulesConfig) { c.HTTP.Interfaces = []string{"192.0.2.1"}; c.Authorizations = auth }, nil, ""},
		{"lan opened", func(c *config.ModulesConfig) {
			c.HTTP.Interfaces = []string{"192.0.2.1"}
			c.AllowUnauthenticated = true
		}, nil, ""},
		{"lan, nothing enabled", func(c *config.ModulesConfig) { c.HTTP.Interfaces = []string{"192.0.2.1"}; c.Enabled = nil }, nil, ""},
		{"lan https without ports", func(c *config.ModulesConfig) { c.HTTPS.Interfaces = []string{"192.0.2.1"}; c.HTTPS.Ports = []int{} }, nil, ""},
		{"rpc protected, status writes with the rpc's secret", nil, rpcAdmin, ""},
		{"rpc protected by no secret that may add, status writes", nil, rpcCatOnly, "refusing to let modules http_status write to the node without protection while API.Authorizations is set"},
		{"rpc protected, no usable secret", nil, rpc.NewAuth(map[string]*config.RPCAuthScope{"x": nil}), "refusing to let modules http_status write"},
		{"rpc protected by no secret that may add, read-only", func(c *config.ModulesConfig) { c.AllowWrite = []string{} }, rpcCatOnly, ""},
		{"rpc protected by no secret that may add, auth", func(c *config.ModulesConfig) { c.Authorizations = auth }, rpcCatOnly, ""},
		{"lan, rpc protected", func(c *config.ModulesConfig) { c.HTTP.Interfaces = []string{"192.0.2.1"} }, rpcAdmin, "refusing to serve the modules on 192.0.2.1:5280 without protection"},
	} {
		cfg := config.DefaultModules()
		if tc.edit != nil {
			tc.edit(&cfg)
		}
		err := modules.CheckExposure(cfg, tc.api)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "Modules.Authorizations") || !strings.Contains(err.Error(), "Modules.AllowUnauthenticated") {
			t.Errorf("%s: got %v, want %q with the fix", tc.name, err, tc.want)
		}
	}
	// Start refuses too, before it listens.
	n := testutil.MustOpenNode(t)
	cfg := config.DefaultModules()
	cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{}
	if _, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo, API: rpcCatOnly, Log: slog.New(slog.DiscardHandler)}); err == nil ||
		!strings.Contains(err.Error(), "refusing to let modules http_status write to the node without protection while API.Authorizations is set") {
		t.Errorf("Start with a writing module and an RPC protected by no secret that may add: %v", err)
	}
	lan := cfg
	lan.HTTP.Interfaces = []string{"192.0.2.1"}
	if _, err := modules.Start(context.Background(), modules.ViewOf(n), lan, modules.Options{Repo: n.Repo, Log: slog.New(slog.DiscardHandler)}); err == nil ||
		!strings.Contains(err.Error(), "refusing to serve the modules on 192.0.2.1:0 without protection: set Modules.Authorizations") {
		t.Errorf("Start off loopback with neither API.Authorizations nor Modules.Authorizations: %v", err)
	}
	cfg.Authorizations = map[string]*config.RPCAuthScope{"me": {AuthSecret: "nope:x"}}
	if _, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo, Log: slog.New(slog.DiscardHandler)}); err == nil || !strings.Contains(err.Error(), "Modules.Authorizations.me") {
		t.Errorf("Start with a bad AuthSecret: %v", err)
	}
}

// Ensure the Lua cap is a share of the board's memory budget: a
// sixteenth, at most 64 MiB (64 MiB without a budget).
func TestLuaMemoryFor_ShareOfBudget(t *testing.T) {
	for budget, want := range map[int]int64{128: 8 << 20, 256: 16 << 20, 512: 32 << 20, 1024: 64 << 20, 4096: 64 << 20, 0: 64 << 20} {
		if got := modules.LuaMemoryFor(budget); got != want {
			t.Errorf("LuaMemoryFor(%d) = %d MiB, want %d MiB", budget, got>>20, want>>20)
		}
	}
}

// mod_http_errors' options come from Modules.Options.http_errors under
// Prosody's names; a wrong type is a config error.
func TestHost_HTTPErrorsOptions(t *testing.T) {
	n := testutil.MustOpenNode(t)
	cfg := config.DefaultModules()
	cfg.Enabled = []string{"http_status"}
	cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{}
	cfg.Options = map[string]map[string]any{"http_errors": {
		"http_errors_messages":        map[string]any{"404": []any{"Not on this board."}, "403": "Ask first."},
		"http_errors_default_message": "Odd.",
		"http_errors_always_show":     true,
	}}
	h, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	resp, err := http.Get(h.Listeners()[0].URL() + "/nothing")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(b), "<p>Not on this board.</p>") {
		t.Errorf("configured 404 message: %d %q", resp.StatusCode, b)
	}
	cfg.Options["http_errors"]["http_errors_detailed"] = "yes"
	if _, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo}); err == nil ||
		!strings.Contains(err.Error(), "Modules.Options.http_errors.http_errors_detailed") {
		t.Errorf("a string for a boolean option: %v", err)
	}
}

// Ensure a node whose RPC has API.Authorizations, and whose modules have
// no logins of their own, starts: the writing app (the status page's
// upload) refuses an anonymous write with a login prompt and takes the
// RPC's bearer token and basic login that may add, and no other secret;
// a read-only app needs no login; the log says so once.
func TestHost_Start_WritingAppsTakeRPCSecrets(t *testing.T) {
	n := testutil.MustOpenNode(t)
	cfg := config.DefaultModules()
	cfg.Enabled = []string{"http_status", "http_ipfs"}
	cfg.HTTP.Ports, cfg.HTTPS.Ports = []int{0}, []int{}
	api := rpc.NewAuth(map[string]*config.RPCAuthScope{
		"admin":  {AuthSecret: "bearer:s3cret-token", AllowedPaths: []string{"/api/v0"}},
		"adder":  {AuthSecret: "basic:adder:pw", AllowedPaths: []string{"/api/v0/add"}},
		"viewer": {AuthSecret: "basic:viewer:pw", AllowedPaths: []string{"/api/v0/cat"}},
	})
	if err := logging.SetLogLevel("modules", "info"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logging.SetLogLevel("modules", "error") })
	stop := testutil.CaptureLog(t)
	h, err := modules.Start(context.Background(), modules.ViewOf(n), cfg, modules.Options{Repo: n.Repo, API: api, Log: slogbridge.Logger("modules"), Gateway: testutil.Gateway(t, n)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	u := h.Listeners()[0].URL()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	upload := func(auth string) *http.Response {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		fw, _ := w.CreateFormFile("file", "x.txt")
		fw.Write([]byte("written with " + auth + "\n"))
		w.Close()
		req, _ := http.NewRequest("POST", u+"/status/", &b)
		req.Header.Set("Content-Type", w.FormDataContentType())
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	var added string
	basic := func(user, pw string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw)) }
	for _, tc := range []struct {
		name, auth string
		code       int
	}{
		{"anonymous", "", 401},
		{"wrong token", "Bearer nope", 401},
		{"a secret the RPC takes for cat only", basic("viewer", "pw"), 401},
		{"the RPC's bearer token", "Bearer s3cret-token", 303},
		{"the RPC's basic login", basic("adder", "pw"), 303},
	} {
		resp := upload(tc.auth)
		if resp.StatusCode != tc.code {
			t.Errorf("%s: got %d, want %d", tc.name, resp.StatusCode, tc.code)
		}
		if tc.code == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("%s: 401 without a Basic challenge: %v", tc.name, resp.Header)
		}
		if tc.code == 303 {
			loc, _ := url.Parse(resp.Header.Get("Location"))
			if added = loc.Query().Get("added"); !strings.HasPrefix(added, "Qm") {
				t.Errorf("%s: Location %q, want the added CID", tc.name, resp.Header.Get("Location"))
			}
		}
	}
	if resp, err := http.Get(u + "/ipfs/" + added); err != nil || resp.StatusCode != 200 {
		t.Errorf("read-only app without a login: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	lines := stop()
	says := 0
	for _, l := range lines {
		if msg, _ := l["msg"].(string); strings.Contains(msg, "API.Authorizations") && l["logger"] == "modules" {
			says++
		}
	}
	if says != 1 {
		t.Errorf("the start-up log names API.Authorizations %d times, want once: %v", says, lines)
	}
}

// Ensure the self-signed certificate generated with a clock years behind
// (a board without a real-time clock at first start) is still valid once
// the clock is set, and one generated with the clock right is valid now.
func TestSelfSigned_ClockBehind_ValidOnceSet(t *testing.T) {
	for _, at := range []time.Time{time.Date(1970, 1, 1, 0, 0, 10, 0, time.UTC), time.Now()} {
		certPEM, _, err := modules.SelfSigned(at)
		if err != nil {
			t.Fatal(err)
		}
		blk, _ := pem.Decode(certPEM)
		cert, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		for _, when := range []time.Time{at, time.Now(), node.ClockFloor.AddDate(5, 0, 0)} {
			if when.Before(cert.NotBefore) || when.After(cert.NotAfter) {
				t.Fatalf("certificate made at %s: valid %s to %s, not at %s", at, cert.NotBefore, cert.NotAfter, when)
			}
		}
	}
}
