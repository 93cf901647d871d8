// dns.go: DNSLink lookups: the resolver from Kubo's DNS.Resolvers config
// (DNS-over-HTTPS URLs per domain suffix, "." for every domain; domains
// not listed go to the system resolver) and the dns command's lookup.

package node

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/ipfs/boxo/namesys"
	"github.com/ipfs/boxo/path"
	doh "github.com/libp2p/go-doh-resolver"
	"github.com/miekg/dns"
	madns "github.com/multiformats/go-multiaddr-dns"
)

// NewDNSResolver builds the resolver for DNS.Resolvers: each key is a
// fully qualified domain suffix ("eth.") or "." (every domain), each value
// a DoH URL (https://, or http:// for a resolver on loopback). An empty
// URL, "auto" or no entry means the system resolver.
func NewDNSResolver(resolvers map[string]string) (*madns.Resolver, error) {
	var opts []madns.Option
	made := map[string]madns.BasicResolver{}
	domains := make([]string, 0, len(resolvers))
	for d := range resolvers {
		domains = append(domains, d)
	}
	sort.Strings(domains)
	for _, domain := range domains {
		url := resolvers[domain]
		if domain != "." && !dns.IsFqdn(domain) {
			return nil, fmt.Errorf("config DNS.Resolvers: invalid domain %s; must be FQDN", domain)
		}
		if url == "" || url == "auto" {
			continue
		}
		r, ok := made[url]
		if !ok {
			if !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://") {
				return nil, fmt.Errorf("config DNS.Resolvers: bad resolver for %s: invalid DoH resolver URL: %s", domain, url)
			}
			var err error
			if r, err = doh.NewResolver(url); err != nil {
				return nil, fmt.Errorf("config DNS.Resolvers: bad resolver for %s: %w", domain, err)
			}
			made[url] = r
		}
		if domain == "." {
			opts = append(opts, madns.WithDefaultResolver(r))
		} else {
			opts = append(opts, madns.WithDomainResolver(domain, r))
		}
	}
	return madns.NewResolver(opts...)
}

// DNSLink resolves the DNSLink of domain (a TXT record "dnslink=<path>" at
// _dnslink.<domain>): one step, or with recursive until the path is no
// longer a DNSLink name (Kubo's dns command). The answer is not cached.
func (m *Names) DNSLink(ctx context.Context, domain string, recursive bool) (path.Path, error) {
	n := m.n
	if len(domain) > maxNameLen {
		return nil, fmt.Errorf("name too long (%d bytes; at most %d)", len(domain), maxNameLen)
	}
	rs, err := NewDNSResolver(n.Config().DNS.Resolvers)
	if err != nil {
		return nil, err
	}
	p, err := path.NewPath("/ipns/" + domain)
	if err != nil {
		return nil, err
	}
	opts := []namesys.ResolveOption{}
	if !recursive {
		opts = append(opts, namesys.ResolveWithDepth(1))
	}
	res, err := namesys.NewDNSResolver(rs.LookupTXT).Resolve(ctx, p, opts...)
	if !recursive && err == namesys.ErrResolveRecursion {
		err = nil // one step asked for
	}
	return res.Path, err
}
