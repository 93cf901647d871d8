// hostname.go: what a request's Host asks for, before its path is
// served: a known gateway host (Gateway.PublicGateways, and Kubo's
// implicit subdomain gateway on localhost) serves its Paths, and with
// UseSubdomains redirects /ipfs/<cid> and /ipns/<name> to
// <cid>.ipfs.<host> and <name>.ipns.<host>; a subdomain of one serves that
// root; any other host with a DNSLink serves /ipns/<host>. Whatever the
// Host says, only content is served: a DNS name rebound to the node
// reaches nothing else.

package gateway

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"cairn/node/config"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/miekg/dns"
	mbase "github.com/multiformats/go-multibase"
	"github.com/valyala/fasthttp"
)

// publicGateway is one Gateway.PublicGateways entry, defaults applied.
type publicGateway struct {
	paths                    []string
	useSubdomains, noDNSLink bool
	inlineDNSLink            bool
	deserialized             bool
}

// hostGateways are the known gateway hosts, exact and with wildcards.
type hostGateways struct {
	exact    map[string]*publicGateway
	wildcard map[*regexp.Regexp]*publicGateway
}

// newHostGateways merges Kubo's implicit localhost subdomain gateway with
// Gateway.PublicGateways (a null entry removes a host).
func newHostGateways(cfg config.Gateway) *hostGateways {
	deser := cfg.DeserializedResponses.WithDefault(true)
	all := map[string]*publicGateway{
		"localhost": {paths: []string{"/ipfs/", "/ipns/", "/p2p/"}, useSubdomains: true, deserialized: deser},
	}
	for host, gw := range cfg.PublicGateways {
		if gw == nil {
			delete(all, host)
			continue
		}
		all[host] = &publicGateway{paths: gw.Paths, useSubdomains: gw.UseSubdomains, noDNSLink: gw.NoDNSLink,
			inlineDNSLink: gw.InlineDNSLink.WithDefault(false), deserialized: gw.DeserializedResponses.WithDefault(deser)}
	}
	h := &hostGateways{exact: map[string]*publicGateway{}, wildcard: map[*regexp.Regexp]*publicGateway{}}
	for host, gw := range all {
		if gw.useSubdomains && net.ParseIP(stripPort(host)) != nil {
			log.Warnf("Gateway.PublicGateways: UseSubdomains cannot be enabled for IP address %s", host)
			continue
		}
		if strings.Contains(host, "*") {
			expr := strings.ReplaceAll(strings.ReplaceAll(host, ".", `\.`), "*", "[^.]+")
			if re, err := regexp.Compile(`^` + expr + `(?::\d+)?$`); err == nil {
				h.wildcard[re] = gw
			}
			continue
		}
		h.exact[host] = gw
	}
	return h
}

func (h *hostGateways) known(host string) (*publicGateway, bool) {
	if gw, ok := h.exact[host]; ok {
		return gw, true
	}
	if gw, ok := h.exact[stripPort(host)]; ok {
		return gw, true
	}
	for re, gw := range h.wildcard {
		if re.MatchString(host) {
			return gw, true
		}
	}
	return nil, false
}

// subdomain splits <root>.<ns>.<known host>.
func (h *hostGateways) subdomain(host string) (gw *publicGateway, gwHost, ns, root string, ok bool) {
	labels := strings.Split(host, ".")
	for i := len(labels) - 1; i >= 2; i-- {
		fqdn := strings.Join(labels[i:], ".")
		gw, ok := h.known(fqdn)
		if !ok || !isSubdomainNS(labels[i-1]) {
			continue
		}
		return gw, fqdn, labels[i-1], strings.Join(labels[:i-1], "."), true
	}
	return nil, "", "", "", false
}

func isSubdomainNS(ns string) bool {
	return ns == "ipfs" || ns == "ipns" || ns == "p2p" || ns == "ipld"
}

func stripPort(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}

func hasPathPrefix(p string, prefixes []string) bool {
	for _, pre := range prefixes {
		pre = strings.TrimSuffix(pre, "/")
		if p == pre || strings.HasPrefix(p, pre+"/") {
			return true
		}
	}
	return false
}

// hostRoute is what the Host makes of a request.
type hostRoute struct {
	path string // the content path to serve ("" when answered)
	// gw is the known gateway the host belongs to (nil: none); dnslink
	// marks a host served from its DNSLink.
	gw      *publicGateway
	dnslink bool
	// origin marks a host that is an origin of its own (a subdomain or
	// a DNSLink host), where a _redirects file applies.
	origin bool
	// parent is the host of a subdomain's gateway (localhost:8080 of
	// <cid>.ipfs.localhost:8080), where a listing's /ipfs/ links lead.
	parent string
}

// route answers the request itself (redirect, 404) and returns "" as
// path, or returns the path to serve.
func (s *Server) route(ctx *fasthttp.RequestCtx, p string) hostRoute {
	host := string(ctx.Host())
	if xh := ctx.Request.Header.Peek("X-Forwarded-Host"); len(xh) > 0 {
		host = string(xh)
	}
	if gw, ok := s.hosts.known(host); ok {
		if hasPathPrefix(p, gw.paths) {
			if gw.useSubdomains {
				if u, err := s.subdomainURL(ctx, host, p, gw.inlineDNSLink); err != nil {
					plainError(ctx, http.StatusBadRequest, err.Error())
					return hostRoute{}
				} else if u != "" {
					redirect(ctx, u)
					return hostRoute{}
				}
			}
			return hostRoute{path: p, gw: gw}
		}
		if !gw.noDNSLink && s.hasDNSLink(host) {
			return hostRoute{path: "/ipns/" + stripPort(host) + p, gw: gw, dnslink: true, origin: true}
		}
		plainError(ctx, http.StatusNotFound, "404 page not found")
		return hostRoute{}
	}
	if gw, gwHost, ns, root, ok := s.hosts.subdomain(host); ok {
		prefix := "/" + ns + "/" + root
		if !gw.useSubdomains || !hasPathPrefix(prefix, gw.paths) || ns == "p2p" || ns == "ipld" {
			plainError(ctx, http.StatusNotFound, "404 page not found")
			return hostRoute{}
		}
		if c, err := cid.Decode(root); err == nil {
			label, err := dnsLabel(root, c)
			if err != nil {
				plainError(ctx, http.StatusBadRequest, err.Error())
				return hostRoute{}
			}
			canonical := !strings.HasPrefix(host, label) || (ns == "ipns" && c.Type() != cid.Libp2pKey)
			if canonical {
				if u, err := s.subdomainURL(ctx, gwHost, "/"+ns+"/"+label+p, gw.inlineDNSLink); err == nil && u != "" {
					redirect(ctx, u)
					return hostRoute{}
				}
			}
		} else if ns == "ipns" && !strings.Contains(root, ".") && strings.Contains(root, "-") {
			// An inlined DNSLink name: my-v--long-example-com.
			fqdn := uninlineDNSLink(root)
			if s.hasDNSLink(fqdn) || !s.hasDNSLink(root) {
				prefix = "/ipns/" + fqdn
			}
		}
		return hostRoute{path: prefix + p, gw: gw, origin: true, parent: gwHost}
	}
	if !s.cfg.NoDNSLink && s.hasDNSLink(host) {
		return hostRoute{path: "/ipns/" + stripPort(host) + p, dnslink: true, origin: true}
	}
	return hostRoute{path: p}
}

func redirect(ctx *fasthttp.RequestCtx, u string) {
	ctx.Response.Header.Set("Location", u)
	ctx.Response.Header.Set("Content-Type", "text/html; charset=utf-8")
	ctx.SetStatusCode(http.StatusMovedPermanently)
	if !ctx.IsHead() {
		ctx.SetBodyString(`<a href="` + htmlEscape(u) + `">Moved Permanently</a>.` + "\n\n")
	}
}

// hasDNSLink reports a host name (not an IP, not a peer ID) that names
// content through DNSLink (or IPFS_NS_MAP).
func (s *Server) hasDNSLink(host string) bool {
	name := stripPort(host)
	if net.ParseIP(name) != nil || name == "" {
		return false
	}
	if _, err := peer.Decode(name); err == nil {
		return false
	}
	if _, ok := dns.IsDomainName(name); !ok {
		return false
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.retrieval)
	defer cancel()
	_, _, err := s.n.Names().ResolveTTL(ctx, "/ipns/"+name)
	return err == nil
}

// dnsLabel is root as one DNS label: as it is when short enough, else as
// a base36 CIDv1.
func dnsLabel(root string, c cid.Cid) (string, error) {
	if len(root) <= 63 {
		return root, nil
	}
	s, err := cid.NewCidV1(c.Type(), c.Hash()).StringOfBase(mbase.Base36)
	if err != nil {
		return "", err
	}
	if len(s) <= 63 {
		return s, nil
	}
	return "", fmt.Errorf("CID incompatible with DNS label length limit of 63: %s", s)
}

func inlineDNSLink(fqdn string) (string, error) {
	l := strings.ReplaceAll(strings.ReplaceAll(fqdn, "-", "--"), ".", "-")
	if len(l) > 63 {
		return "", fmt.Errorf("inlined DNSLink incompatible with DNS label length limit of 63: %q", l)
	}
	return l, nil
}

func uninlineDNSLink(label string) string {
	var b strings.Builder
	for i := 0; i < len(label); i++ {
		switch {
		case label[i] == '-' && i+1 < len(label) && label[i+1] == '-':
			b.WriteByte('-')
			i++
		case label[i] == '-':
			b.WriteByte('.')
		default:
			b.WriteByte(label[i])
		}
	}
	return b.String()
}

// subdomainURL is the subdomain gateway URL of path p on host: the root
// as a CIDv1 (base32, base36 for keys) or, for /ipns/ DNSLink names with
// inlining (or https), an inlined label; "" when p has no root to move.
func (s *Server) subdomainURL(ctx *fasthttp.RequestCtx, host, p string, inline bool) (string, error) {
	parts := strings.SplitN(p, "/", 4)
	if len(parts) < 3 {
		return "", nil
	}
	ns, root, rest := parts[1], parts[2], ""
	if len(parts) == 4 {
		rest = parts[3]
	}
	if !isSubdomainNS(ns) {
		return "", nil
	}
	https := string(ctx.Request.Header.Peek("X-Forwarded-Proto")) == "https"
	isKeyNS := ns == "ipns" || ns == "p2p"
	if isKeyNS {
		if id, err := peer.Decode(root); err == nil {
			root = peer.ToCid(id).String()
		}
	}
	if c, err := cid.Decode(root); err == nil {
		codec, base := c.Type(), mbase.Encoding(mbase.Base32)
		if isKeyNS {
			codec, base = cid.Libp2pKey, mbase.Base36
		}
		v1 := cid.NewCidV1(codec, c.Hash())
		if root, err = v1.StringOfBase(base); err != nil {
			return "", err
		}
		if root, err = dnsLabel(root, v1); err != nil {
			return "", err
		}
	} else {
		if ns == "ipns" && !strings.Contains(root, ".") && strings.Contains(root, "-") {
			if fqdn := uninlineDNSLink(root); s.hasDNSLink(fqdn) {
				root = fqdn
			}
		}
		if (inline || https) && ns == "ipns" && strings.Contains(root, ".") {
			if s.hasDNSLink(root) {
				l, err := inlineDNSLink(root)
				if err != nil {
					return "", err
				}
				root = l
			}
		} else if ns == "ipfs" {
			return "", nil
		}
	}
	if root == "" {
		return "", nil
	}
	u := url.URL{Scheme: "http", Host: root + "." + ns + "." + host, Path: "/" + rest, RawQuery: string(ctx.URI().QueryString())}
	if https {
		u.Scheme = "https"
	}
	return u.String(), nil
}
