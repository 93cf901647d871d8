package commands_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"cairn/commands"
	"cairn/internal/testutil"
	"cairn/node"

	"github.com/ipfs/boxo/files"
	"github.com/miekg/dns"
)

// dohServer answers DNS-over-HTTPS queries (RFC 8484 POST) on 127.0.0.1
// from txt: "_dnslink.<domain>." => TXT strings. Every other name is
// NXDOMAIN. It counts the queries.
func dohServer(t *testing.T, txt map[string][]string) (string, *atomic.Int64) {
	t.Helper()
	var count atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count.Add(1)
		body, _ := io.ReadAll(r.Body)
		var q dns.Msg
		if err := q.Unpack(body); err != nil || len(q.Question) != 1 {
			http.Error(w, "bad query", http.StatusBadRequest)
			return
		}
		var m dns.Msg
		m.SetReply(&q)
		name := q.Question[0].Name
		vals, ok := txt[name]
		if !ok {
			m.Rcode = dns.RcodeNameError
		}
		for _, v := range vals {
			m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{v}})
		}
		out, _ := m.Pack()
		w.Header().Set("Content-Type", "application/dns-message")
		w.Write(out)
	}))
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("DoH server not on loopback: %s", srv.URL)
	}
	return srv.URL + "/dns-query", &count
}

func TestDNSLink_LocalResolver(t *testing.T) {
	n := testutil.MustOpenNode(t)
	root := blkAdd(t, n, "site", files.NewMapDirectory(map[string]files.Node{"index.html": files.NewBytesFile([]byte("hello from DNSLink"))}), nil)
	self := ipnsNameOf(n.PeerID)
	url, count := dohServer(t, map[string][]string{
		"_dnslink.board.test.":   {"dnslink=/ipfs/" + root},
		"_dnslink.alias.test.":   {"dnslink=/ipns/board.test"},
		"_dnslink.viaipns.test.": {"dnslink=/ipns/" + self},
		"_dnslink.loop-a.test.":  {"dnslink=/ipns/loop-b.test"},
		"_dnslink.loop-b.test.":  {"dnslink=/ipns/loop-a.test"},
		"_dnslink.two.test.":     {"dnslink=/ipfs/" + root, "dnslink=/ipfs/bafkqaaa"},
		"_dnslink.junk.test.":    {"not a dnslink"},
	})
	// Every domain goes to the local DoH server: the test never touches public DNS.
	testutil.SetConfig(t, n, map[string]any{"DNS.Resolvers": map[string]any{".": url}})
	publish(t, n, root, nil)

	dnsOne := func(domain string, opts map[string]string) string {
		t.Helper()
		return blkCall(t, n, "dns", []string{domain}, opts, nil).Values[0].(*commands.ResolvedPath).Path
	}
	if got := dnsOne("board.test", nil); got != "/ipfs/"+root {
		t.Errorf("dns board.test: %s", got)
	}
	if got := dnsOne("alias.test", nil); got != "/ipfs/"+root {
		t.Errorf("dns -r alias.test: %s", got)
	}
	if got := dnsOne("alias.test", map[string]string{"recursive": "false"}); got != "/ipns/board.test" {
		t.Errorf("dns -r=false alias.test: %s", got)
	}
	// /ipns/<domain> everywhere a path is taken.
	if got := nameResolve(t, n, "alias.test", nil); got != "/ipfs/"+root {
		t.Errorf("name/resolve alias.test: %s", got)
	}
	if got := resolveOne(t, n, "/ipns/viaipns.test/index.html", nil); got != "/ipfs/"+lsKey(t, n, root+"/index.html") {
		t.Errorf("resolve through DNSLink and IPNS: %s", got)
	}
	if got := string(blkCall(t, n, "cat", []string{"/ipns/alias.test/index.html"}, nil, nil).Bytes); got != "hello from DNSLink" {
		t.Errorf("cat /ipns/alias.test: %q", got)
	}
	// Errors: a loop hits the depth limit, missing and ambiguous records.
	for _, tc := range []struct{ cmd, arg, want string }{
		{"dns", "loop-a.test", "could not resolve name (recursion limit exceeded)"},
		{"name/resolve", "loop-a.test", "could not resolve name (recursion limit exceeded)"},
		{"dns", "missing.test", "could not resolve name"},
		{"dns", "junk.test", "could not resolve name"},
		{"dns", "two.test", "more than one IPFS content path"},
		{"dns", strings.Repeat("a", 10<<10) + ".test", "name too long"},
	} {
		if msg := blkCallErr(t, n, tc.cmd, []string{tc.arg}, nil, nil); !strings.Contains(msg, tc.want) {
			t.Errorf("%s %.30s: %q, want %q", tc.cmd, tc.arg, msg, tc.want)
		}
	}
	if count.Load() == 0 {
		t.Error("the DoH server saw no query")
	}
}

func TestDNSLink_ResolverConfig(t *testing.T) {
	for _, tc := range []struct {
		res  map[string]string
		want string
	}{
		{map[string]string{"eth": "https://example.org/dns-query"}, "invalid domain eth; must be FQDN"},
		{map[string]string{".": "udp://127.0.0.1:53"}, "invalid DoH resolver URL: udp://127.0.0.1:53"},
	} {
		if _, err := node.NewDNSResolver(tc.res); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.res, err, tc.want)
		}
	}
	if _, err := node.NewDNSResolver(map[string]string{"eth.": "https://dns.eth.limo/dns-query", ".": "auto"}); err != nil {
		t.Errorf("valid resolvers: %v", err)
	}
}
