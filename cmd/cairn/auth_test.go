package main

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cairn/node"
	"cairn/node/config"

	shell "github.com/ipfs/go-ipfs-api"
	ma "github.com/multiformats/go-multiaddr"
)

// authTransport adds an Authorization header to every request, the way a
// go-ipfs-api user reaches a node protected by API.Authorizations.
type authTransport struct {
	header string
	base   http.RoundTripper
}

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", a.header)
	return a.base.RoundTrip(r)
}

// authDaemon starts a daemon on loopback whose config requires a bearer
// token for everything and a basic secret for cat only; the module apps
// (the status page can add) need a basic login.
func authDaemon(t *testing.T) (string, string) {
	t.Helper()
	repo, url, _ := authDaemonOut(t)
	return repo, url
}

func authDaemonOut(t *testing.T) (string, string, *syncBuffer) {
	t.Helper()
	repo := initRepo(t)
	setConfig(t, repo, map[string]any{"API.Authorizations": map[string]any{
		"admin":  map[string]any{"AuthSecret": "bearer:s3cret-token", "AllowedPaths": []any{"/api/v0"}},
		"viewer": map[string]any{"AuthSecret": "basic:viewer:pw", "AllowedPaths": []any{"/api/v0/cat"}},
	}, "Modules.Authorizations": map[string]any{
		"me": map[string]any{"AuthSecret": "basic:me:pw", "AllowedPaths": []any{"/"}},
	}})
	_, url, out := startDaemon(t, repo)
	return repo, url, out
}

// Ensure a node whose RPC needs a token, and whose modules have no
// logins of their own, starts: its status page (a writing app) asks
// for a login and takes the RPC's token.
func TestDaemon_Authorizations_WritingModuleTakesRPCToken(t *testing.T) {
	repo := initRepo(t)
	setConfig(t, repo, map[string]any{"API.Authorizations": map[string]any{
		"admin": map[string]any{"AuthSecret": "bearer:s3cret-token", "AllowedPaths": []any{"/api/v0"}},
	}})
	_, _, out := startDaemon(t, repo)
	status := statusURL(t, out)
	for _, tc := range []struct {
		auth string
		code int
	}{{"", 401}, {"Bearer s3cret-token", 200}} {
		req, _ := http.NewRequest("GET", status, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("GET %s with %q: %d, want %d", status, tc.auth, resp.StatusCode, tc.code)
		}
	}
}

// statusURL is the status app's http URL the daemon prints at start.
func statusURL(t *testing.T, out *syncBuffer) string {
	t.Helper()
	var status string
	for deadline := time.Now().Add(10 * time.Second); status == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, l := range strings.Split(out.String(), "\n") {
			if u, ok := strings.CutPrefix(l, "Module app status: "); ok && strings.HasPrefix(u, "http://") {
				status = u
			}
		}
	}
	if status == "" {
		t.Fatalf("no status URL: %s", out.String())
	}
	return status
}

// Ensure a node whose RPC is protected by no secret that may add does
// not start with a module app that can write and no
// Modules.Authorizations, and says how to fix it.
func TestDaemon_Authorizations_WritingModuleRefused(t *testing.T) {
	repo := initRepo(t)
	setConfig(t, repo, map[string]any{"API.Authorizations": map[string]any{
		"viewer": map[string]any{"AuthSecret": "basic:viewer:pw", "AllowedPaths": []any{"/api/v0/cat"}},
	}})
	_, errs, code := cli(t, repo, nil, "daemon")
	if code != 1 || !strings.Contains(errs, "refusing to let modules http_status write to the node without protection while API.Authorizations is set: set Modules.Authorizations") {
		t.Fatalf("code %d %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(repo, node.APIFile)); !os.IsNotExist(err) {
		t.Fatalf("api file written: %v", err)
	}
}

// Ensure the status page's upload, reached as an attacker would (an
// anonymous multipart POST on the module port of a node with
// Authorizations), is refused with a login prompt and pins nothing,
// while the login adds.
func TestDaemon_Authorizations_ModulePort(t *testing.T) {
	repo, url, out := authDaemonOut(t)
	status := statusURL(t, out)
	upload := func(auth string) (int, string) {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		fw, _ := w.CreateFormFile("file", "x.txt")
		fw.Write([]byte("anonymous\n"))
		w.Close()
		req, _ := http.NewRequest("POST", status, &b)
		req.Header.Set("Content-Type", w.FormDataContentType())
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == 401 && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("401 without a challenge")
		}
		return resp.StatusCode, string(body)
	}
	if code, _ := upload(""); code != 401 {
		t.Fatalf("anonymous upload: %d, want 401", code)
	}
	pins, errs, code := cli(t, repo, nil, "--api", "/ip4/127.0.0.1/tcp/"+url[strings.LastIndex(url, ":")+1:], "--api-auth", "bearer:s3cret-token", "pin", "ls", "-q")
	if code != 0 || pins != emptyDir+"\n" { // init's pin only
		t.Fatalf("pins after the anonymous upload: %q %q", pins, errs)
	}
	if code, body := upload("Basic bWU6cHc="); code != 200 || !strings.Contains(body, `id="cid">Qm`) {
		t.Fatalf("upload with the login: %d %.200q", code, body)
	}
}

func post(t *testing.T, url string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Ensure go-ipfs-api with an Authorization header works against a daemon
// with API.Authorizations, while a wrong or missing secret gets 403 and a
// browser origin is refused even with the right secret.
func TestDaemon_Authorizations_IpfsAPI(t *testing.T) {
	_, url := authDaemon(t)
	host := strings.TrimPrefix(url, "http://")
	hc := &http.Client{Transport: authTransport{"Bearer s3cret-token", http.DefaultTransport}}
	sh := shell.NewShellWithClient(host, hc)
	c, err := sh.Add(strings.NewReader("hello world\n"))
	if err != nil || c != "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o" {
		t.Fatalf("add with token: %q %v", c, err)
	}
	rc, err := sh.Cat(c)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != "hello world\n" {
		t.Fatalf("cat: %q", got)
	}

	wrong := shell.NewShellWithClient(host, &http.Client{Transport: authTransport{"Bearer nope", http.DefaultTransport}})
	if _, err := wrong.Add(strings.NewReader("x")); err == nil || !strings.Contains(err.Error(), "Kubo RPC Access Denied") {
		t.Fatalf("add with a wrong token: %v", err)
	}
	if _, err := shell.NewShell(host).Cat(c); err == nil || !strings.Contains(err.Error(), "Kubo RPC Access Denied") {
		t.Fatalf("cat without a token: %v", err)
	}

	const denied = "Kubo RPC Access Denied: Please provide a valid authorization token as defined in the API.Authorizations configuration.\n"
	for _, tc := range []struct {
		name string
		path string
		hdr  map[string]string
		code int
	}{
		{"missing", "/api/v0/cat?arg=" + c, nil, 403},
		{"wrong bearer", "/api/v0/cat?arg=" + c, map[string]string{"Authorization": "Bearer s3cret-tokem"}, 403},
		{"wrong scheme", "/api/v0/cat?arg=" + c, map[string]string{"Authorization": "Basic s3cret-token"}, 403},
		{"basic on its path", "/api/v0/cat?arg=" + c, map[string]string{"Authorization": "Basic dmlld2VyOnB3"}, 200},
		{"basic off its path", "/api/v0/add", map[string]string{"Authorization": "Basic dmlld2VyOnB3"}, 403},
		{"version for any valid secret", "/api/v0/version", map[string]string{"Authorization": "Basic dmlld2VyOnB3"}, 200},
		{"browser origin with the token", "/api/v0/cat?arg=" + c,
			map[string]string{"Authorization": "Bearer s3cret-token", "Origin": "http://evil.example"}, 403},
		{"browser referer with the token", "/api/v0/cat?arg=" + c,
			map[string]string{"Authorization": "Bearer s3cret-token", "Referer": "http://evil.example/page"}, 403},
	} {
		code, body := post(t, url+tc.path, tc.hdr)
		if code != tc.code {
			t.Fatalf("%s: got %d %q, want %d", tc.name, code, body, tc.code)
		}
		if code == 403 && tc.hdr["Origin"] == "" && tc.hdr["Referer"] == "" && body != denied {
			t.Fatalf("%s: body %q", tc.name, body)
		}
	}
}

// Ensure cairn's own CLI reaches a protected daemon with --api-auth and
// fails clearly with a wrong secret or none.
func TestDaemon_Authorizations_CLIApiAuth(t *testing.T) {
	repo, url := authDaemon(t)
	api := "/ip4/127.0.0.1/tcp/" + url[strings.LastIndex(url, ":")+1:]
	out, errs, code := cli(t, repo, strings.NewReader("hello world\n"), "--api", api, "--api-auth", "bearer:s3cret-token", "add", "-q")
	if code != 0 || out != "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o\n" {
		t.Fatalf("add: %q %q", out, errs)
	}
	out, errs, code = cli(t, repo, nil, "--api", api, "--api-auth", "basic:viewer:pw", "cat", "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o")
	if code != 0 || out != "hello world\n" {
		t.Fatalf("cat with basic: %q %q", out, errs)
	}
	for _, auth := range []string{"bearer:wrong", ""} {
		args := []string{"--api", api, "cat", "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o"}
		if auth != "" {
			args = append([]string{"--api-auth", auth}, args...)
		}
		_, errs, code = cli(t, repo, nil, args...)
		if code != 1 || !strings.Contains(errs, "Kubo RPC Access Denied") {
			t.Fatalf("--api-auth %q: code %d %q", auth, code, errs)
		}
	}
}

// Ensure a LAN (non-loopback) RPC address is refused without
// API.Authorizations before anything listens: the loopback address listed
// first is not bound either, and no api file appears. Only 2001:db8::1
// (the IPv6 documentation prefix) appears, as a config value; nothing
// listens on it or dials it.
func TestDaemon_LANAddress_RefusedBeforeListen(t *testing.T) {
	repo := initRepo(t)
	setConfig(t, repo, map[string]any{"Addresses.API": []any{"/ip4/127.0.0.1/tcp/0", "/ip6/2001:db8::1/tcp/0"}})
	_, errs, code := cli(t, repo, nil, "daemon")
	if code != 1 || !strings.Contains(errs, "refusing to serve the RPC on /ip6/2001:db8::1/tcp/0 without protection: set API.Authorizations") {
		t.Fatalf("code %d %q", code, errs)
	}
	if strings.Contains(errs, "listening") {
		t.Fatalf("listened before refusing: %q", errs)
	}
	if _, err := os.Stat(filepath.Join(repo, node.APIFile)); !os.IsNotExist(err) {
		t.Fatalf("api file written: %v", err)
	}
}

// Ensure the exposure rule: loopback and unix sockets are always allowed;
// LAN and wildcard addresses need Authorizations or AllowUnauthenticated.
func TestCheckAPIExposure_Rules(t *testing.T) {
	withAuth := config.API{Authorizations: map[string]*config.RPCAuthScope{"a": {AuthSecret: "bearer:x", AllowedPaths: []string{"/api/v0"}}}}
	open := config.API{AllowUnauthenticated: true}
	for _, tc := range []struct {
		addr string
		api  config.API
		ok   bool
	}{
		{"/ip4/127.0.0.1/tcp/5001", config.API{}, true},
		{"/ip6/::1/tcp/5001", config.API{}, true},
		{"/unix/tmp/cairn.sock", config.API{}, true},
		{"/ip6/2001:db8::1/tcp/5001", config.API{}, false},
		{"/ip6/::/tcp/5001", config.API{}, false},
		{"/ip6/2001:db8::1/tcp/5001", withAuth, true},
		{"/ip6/::/tcp/5001", open, true},
	} {
		err := checkAPIExposure(ma.StringCast(tc.addr), tc.api)
		if (err == nil) != tc.ok {
			t.Fatalf("%s %+v: got %v, want ok=%v", tc.addr, tc.api, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "API.AllowUnauthenticated") {
			t.Fatalf("%s: message does not say how to fix it: %v", tc.addr, err)
		}
	}
}

// Ensure API.AllowUnauthenticated is warned about at every start.
func TestDaemon_AllowUnauthenticated_WarnsEveryStart(t *testing.T) {
	repo := initRepo(t)
	setConfig(t, repo, map[string]any{"API.AllowUnauthenticated": true})
	for i := 0; i < 2; i++ {
		d, _, out := startDaemon(t, repo)
		d.Process.Signal(syscall.SIGTERM)
		if code := waitExit(t, d, 10*time.Second); code != 0 {
			t.Fatalf("exit %d", code)
		}
		if !strings.Contains(out.String(), "WARNING: API.AllowUnauthenticated is true") {
			t.Fatalf("start %d: no warning in %q", i+1, out.String())
		}
	}
}
