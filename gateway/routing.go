// routing.go: the Delegated Routing V1 HTTP API (/routing/v1/) on the
// gateway's port, as Kubo 0.43 serves it while Gateway.ExposeRoutingAPI
// is true (its default): providers and peers found through the node's
// DHT, IPNS records through its name system, with the answers, status
// codes, error texts and Cache-Control of Kubo's (boxo's) server.

package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/ipfs/boxo/ipns"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/routing"
	"github.com/multiformats/go-multiaddr"
	"github.com/multiformats/go-multibase"
	"github.com/valyala/fasthttp"
)

// The routing API's bounds and answers, as Kubo's: a query ends after
// routingTimeout, a JSON answer holds at most routingRecordsLimit records
// (NDJSON streams all of them).
const (
	routingPrefix       = "/routing/v1/"
	routingTimeout      = 30 * time.Second
	routingRecordsLimit = 20

	mediaJSON       = "application/json"
	mediaNDJSON     = "application/x-ndjson"
	mediaIpnsRecord = "application/vnd.ipfs.ipns-record"
)

// Cache-Control of routing answers: results are kept five minutes (and
// served stale while revalidated for ten), an empty answer fifteen
// seconds.
const (
	cacheWithResults    = "public, max-age=300, stale-while-revalidate=600, stale-if-error=172800"
	cacheWithoutResults = "public, max-age=15, stale-while-revalidate=60, stale-if-error=3600"
)

// errNoDHT is the answer for closest peers on a node without a DHT.
var errNoDHT = errors.New("GetClosestPeers not supported: DHT is not available")

// peerRecord is one record of the "peer" schema. Its JSON has Kubo's
// field order (the keys sorted) and leaves out empty lists.
type peerRecord struct {
	Addrs     []string `json:",omitempty"`
	ID        string
	Protocols []string `json:",omitempty"`
	Schema    string
}

func newPeerRecord(ai peer.AddrInfo) *peerRecord {
	r := &peerRecord{ID: ai.ID.String(), Schema: "peer"}
	for _, a := range ai.Addrs {
		r.Addrs = append(r.Addrs, a.String())
	}
	return r
}

// routingFilters are the filter-addrs and filter-protocols of a request.
type routingFilters struct {
	addrs, protocols []string
}

// listRequest reads what a request for a list asks: the answer's type
// and the filters; a bad Accept is answered 400.
func listRequest(ctx *fasthttp.RequestCtx) (string, routingFilters, bool) {
	f := routingFilters{parseFilter(ctx.QueryArgs().Peek("filter-addrs")), parseFilter(ctx.QueryArgs().Peek("filter-protocols"))}
	mt, err := responseType(ctx)
	if err != nil {
		routingError(ctx, http.StatusBadRequest, err)
		return "", f, false
	}
	return mt, f, true
}

func parseFilter(v []byte) []string {
	if len(v) == 0 {
		return nil
	}
	return strings.Split(strings.ToLower(string(v)), ",")
}

// apply returns r as the filters keep it, nil when they drop it: a
// record must speak one of the protocols asked ("unknown" keeps those
// that name none), and keeps only the addresses with a protocol asked
// and none refused ("!name"); a record without addresses stays only when
// "unknown" is asked.
func (f routingFilters) apply(r *peerRecord) *peerRecord {
	if len(f.addrs) == 0 && len(f.protocols) == 0 {
		return r
	}
	if len(f.protocols) > 0 && !protocolAllowed(r.Protocols, f.protocols) {
		return nil
	}
	if len(f.addrs) == 0 || (len(r.Addrs) == 0 && slices.Contains(f.addrs, "unknown")) {
		return r
	}
	var want, refuse []int
	for _, name := range f.addrs {
		if n, ok := strings.CutPrefix(name, "!"); ok {
			refuse = append(refuse, multiaddr.ProtocolWithName(n).Code)
		} else {
			want = append(want, multiaddr.ProtocolWithName(name).Code)
		}
	}
	var kept []string
	for _, s := range r.Addrs {
		a, err := multiaddr.NewMultiaddr(s)
		if err != nil {
			continue
		}
		var codes []int
		for _, p := range a.Protocols() {
			codes = append(codes, p.Code)
		}
		has := func(list []int) bool {
			for _, c := range list {
				if slices.Contains(codes, c) {
					return true
				}
			}
			return false
		}
		if has(refuse) {
			continue
		}
		if len(want) == 0 || has(want) {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	out := *r
	out.Addrs = kept
	return &out
}

func protocolAllowed(have, asked []string) bool {
	for _, a := range asked {
		if a == "unknown" && len(have) == 0 {
			return true
		}
		for _, h := range have {
			if strings.EqualFold(h, a) {
				return true
			}
		}
	}
	return false
}

// serveRouting answers a request under /routing/v1/. Its routes and
// their methods are those of Kubo's server; a known route asked with
// another method is 405, anything else 404.
func (s *Server) serveRouting(ctx *fasthttp.RequestCtx, p string) {
	rest := strings.TrimPrefix(p, routingPrefix)
	method := string(ctx.Method())
	segs := strings.Split(rest, "/")
	var run func(*fasthttp.RequestCtx, *routingQuery, string)
	var arg string
	switch {
	case rest == "providers/":
		if method != http.MethodPut {
			ctx.SetStatusCode(http.StatusMethodNotAllowed)
			return
		}
		run = s.routingProvide
	case len(segs) == 2 && segs[0] == "providers" && segs[1] != "":
		if method != http.MethodGet {
			ctx.SetStatusCode(http.StatusMethodNotAllowed)
			return
		}
		run, arg = s.routingProviders, segs[1]
	case len(segs) == 2 && segs[0] == "peers" && segs[1] != "":
		if method != http.MethodGet {
			ctx.SetStatusCode(http.StatusMethodNotAllowed)
			return
		}
		run, arg = s.routingPeers, segs[1]
	case len(segs) == 2 && segs[0] == "ipns" && segs[1] != "":
		switch method {
		case http.MethodGet:
			run = s.routingGetIPNS
		case http.MethodPut:
			run = s.routingPutIPNS
		default:
			ctx.SetStatusCode(http.StatusMethodNotAllowed)
			return
		}
		arg = segs[1]
	case len(segs) == 4 && segs[0] == "dht" && segs[1] == "closest" && segs[2] == "peers" && segs[3] != "":
		if method != http.MethodGet {
			ctx.SetStatusCode(http.StatusMethodNotAllowed)
			return
		}
		run, arg = s.routingClosest, segs[3]
	default:
		plainError(ctx, http.StatusNotFound, "404 page not found")
		return
	}
	if !s.takeSlot(ctx) {
		return
	}
	qctx, cancel := context.WithTimeout(s.ctx, routingTimeout)
	q := &routingQuery{ctx: qctx, done: func() { cancel(); <-s.slots }}
	run(ctx, q, arg)
	if !q.streamed {
		q.done()
	}
}

// routingQuery is one request's routing work: its context (ends after
// routingTimeout or at Shutdown) and what ends it (frees its slot). An
// answer streamed after the handler returns ends it itself.
type routingQuery struct {
	ctx      context.Context
	done     func()
	streamed bool
}

// routingError answers as Kubo's server does: the status and the cause
// (cut at 1,024 bytes) in text/plain.
func routingError(ctx *fasthttp.RequestCtx, code int, cause error) {
	msg := cause.Error()
	if len(msg) > 1024 {
		msg = msg[:1024]
	}
	if errors.Is(cause, routing.ErrNotFound) {
		ctx.Response.Header.Set("Cache-Control", cacheWithoutResults)
	}
	ctx.Response.Header.Set("Content-Type", "text/plain; charset=utf-8")
	ctx.SetStatusCode(code)
	ctx.SetBodyString(msg)
}

// responseType picks JSON or NDJSON from the Accept headers (none: JSON).
func responseType(ctx *fasthttp.RequestCtx) (string, error) {
	values := ctx.Request.Header.PeekAll("Accept")
	if len(values) == 0 {
		return mediaJSON, nil
	}
	var json, ndjson bool
	for _, v := range values {
		for _, part := range strings.Split(string(v), ",") {
			mt, _, err := mime.ParseMediaType(part)
			if err != nil {
				return "", fmt.Errorf("unable to parse Accept header: %w", err)
			}
			switch mt {
			case mediaJSON, "*/*":
				json = true
			case mediaNDJSON:
				ndjson = true
			}
		}
	}
	switch {
	case ndjson:
		return mediaNDJSON, nil
	case json:
		return mediaJSON, nil
	}
	return "", errors.New("no supported content types")
}

// marshalRecord is a record's JSON without the escaping of <, > and &.
func marshalRecord(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func setRoutingHeaders(ctx *fasthttp.RequestCtx, mediaType string) {
	h := &ctx.Response.Header
	h.Set("Content-Type", mediaType)
	h.Add("Vary", "Accept")
	h.Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
}

// answerRecords answers the records next yields (until it returns nil)
// as a JSON document {key: [...]} of at most limit records (0: all) or,
// for NDJSON, one record a line as they are found, flushed each. Always
// 200, as Kubo's: an empty answer is cached briefly.
func (s *Server) answerRecords(ctx *fasthttp.RequestCtx, q *routingQuery, mediaType, key string, limit int, f routingFilters, next func() *peerRecord) {
	keep := func() *peerRecord {
		for {
			r := next()
			if r == nil {
				return nil
			}
			if r = f.apply(r); r != nil {
				return r
			}
		}
	}
	setRoutingHeaders(ctx, mediaType)
	if mediaType == mediaJSON {
		recs := []*peerRecord{}
		for limit == 0 || len(recs) < limit {
			r := keep()
			if r == nil {
				break
			}
			recs = append(recs, r)
		}
		body, err := marshalRecord(map[string]any{key: recs})
		if err != nil {
			routingError(ctx, http.StatusInternalServerError, fmt.Errorf("marshaling response: %w", err))
			return
		}
		if len(recs) > 0 {
			ctx.Response.Header.Set("Cache-Control", cacheWithResults)
		} else {
			ctx.Response.Header.Set("Cache-Control", cacheWithoutResults)
		}
		ctx.SetBody(body)
		return
	}
	// NDJSON: the headers go with the first record, so wait for it.
	first := keep()
	if first == nil {
		ctx.Response.Header.Set("Cache-Control", cacheWithoutResults)
		return
	}
	ctx.Response.Header.Set("Cache-Control", cacheWithResults)
	q.streamed = true
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer q.done()
		for r := first; r != nil; r = keep() {
			b, err := marshalRecord(r)
			if err != nil {
				return
			}
			w.Write(b)
			w.WriteByte('\n')
			if w.Flush() != nil {
				return // the client went
			}
		}
	})
}

// routingProviders answers the providers of a CID the node's DHT finds
// (none on a node without one).
func (s *Server) routingProviders(ctx *fasthttp.RequestCtx, q *routingQuery, arg string) {
	c, err := cid.Decode(arg)
	if err != nil {
		routingError(ctx, http.StatusBadRequest, fmt.Errorf("unable to parse CID: %w", err))
		return
	}
	mt, f, ok := listRequest(ctx)
	if !ok {
		return
	}
	var found <-chan peer.AddrInfo
	if nt := s.n.Net; nt != nil && nt.DHT != nil {
		found = nt.DHT.FindProvidersAsync(q.ctx, c, 0)
	}
	s.answerRecords(ctx, q, mt, "Providers", routingRecordsLimit, f, func() *peerRecord {
		if found == nil {
			return nil
		}
		select {
		case ai, ok := <-found:
			if !ok {
				return nil
			}
			return newPeerRecord(ai)
		case <-q.ctx.Done():
			return nil
		}
	})
}

// parsePeerID reads a peer ID as a string or as a CID of any codec (its
// multihash taken as the key's), as Kubo's server does.
func parsePeerID(s string) (peer.ID, error) {
	id, err := peer.Decode(s)
	if err != nil {
		if c, err2 := cid.Decode(s); err2 == nil {
			id, err = peer.FromCid(cid.NewCidV1(cid.Libp2pKey, c.Hash()))
		}
	}
	return id, err
}

// routingPeers answers the addresses of a peer (peerstore, then DHT).
func (s *Server) routingPeers(ctx *fasthttp.RequestCtx, q *routingQuery, arg string) {
	id, err := parsePeerID(arg)
	if err != nil {
		routingError(ctx, http.StatusBadRequest, fmt.Errorf("unable to parse PeerID %q: %w", arg, err))
		return
	}
	mt, f, ok := listRequest(ctx)
	if !ok {
		return
	}
	var rec *peerRecord
	if nt := s.n.Net; nt != nil {
		ai, err := nt.FindPeer(q.ctx, id)
		switch {
		case err == nil:
			rec = newPeerRecord(ai)
		case !errors.Is(err, routing.ErrNotFound):
			routingError(ctx, http.StatusInternalServerError, fmt.Errorf("delegate error: %w", err))
			return
		}
	}
	s.answerRecords(ctx, q, mt, "Peers", routingRecordsLimit, f, func() *peerRecord {
		r := rec
		rec = nil
		return r
	})
}

// routingClosest answers the WAN DHT's closest peers to a key.
func (s *Server) routingClosest(ctx *fasthttp.RequestCtx, q *routingQuery, arg string) {
	var key cid.Cid
	id, perr := peer.Decode(arg)
	if perr == nil {
		key = peer.ToCid(id)
	} else {
		c, cerr := cid.Decode(arg)
		if cerr != nil {
			routingError(ctx, http.StatusBadRequest, fmt.Errorf("unable to parse key %q: %w", arg,
				fmt.Errorf("unable to parse as CID or PeerID: %w", errors.Join(cerr, perr))))
			return
		}
		key = c
	}
	mt, err := responseType(ctx)
	if err != nil {
		routingError(ctx, http.StatusBadRequest, err)
		return
	}
	nt := s.n.Net
	if nt == nil || nt.DHT == nil {
		routingError(ctx, http.StatusInternalServerError, fmt.Errorf("delegate error: %w", errNoDHT))
		return
	}
	// The WAN table only: the LAN's peers are private addresses.
	ids, err := nt.DHT.WAN.GetClosestPeers(q.ctx, string(key.Hash()))
	if err != nil && !errors.Is(err, routing.ErrNotFound) {
		routingError(ctx, http.StatusInternalServerError, fmt.Errorf("delegate error: %w", err))
		return
	}
	ps := nt.Host.Peerstore()
	var recs []*peerRecord
	for _, p := range ids {
		recs = append(recs, newPeerRecord(peer.AddrInfo{ID: p, Addrs: ps.Addrs(p)}))
	}
	// Kubo's server does not cap this list.
	s.answerRecords(ctx, q, mt, "Peers", 0, routingFilters{}, func() *peerRecord {
		if len(recs) == 0 {
			return nil
		}
		r := recs[0]
		recs = recs[1:]
		return r
	})
}

// ipnsName reads the name of an ipns route: a CID (libp2p-key).
func ipnsName(ctx *fasthttp.RequestCtx, arg string) (ipns.Name, cid.Cid, bool) {
	c, err := cid.Decode(arg)
	if err != nil {
		routingError(ctx, http.StatusBadRequest, fmt.Errorf("unable to parse CID: %w", err))
		return ipns.Name{}, c, false
	}
	name, err := ipns.NameFromCid(c)
	if err != nil {
		routingError(ctx, http.StatusBadRequest, fmt.Errorf("peer ID CID is not valid: %w", err))
		return ipns.Name{}, c, false
	}
	return name, c, true
}

// routingGetIPNS answers the best signed record of a name, cacheable for
// its TTL and never past its validity.
func (s *Server) routingGetIPNS(ctx *fasthttp.RequestCtx, q *routingQuery, arg string) {
	accept := string(ctx.Request.Header.Peek("Accept"))
	if accept == "" || strings.Contains(accept, "*/*") {
		accept = mediaIpnsRecord
	}
	if !strings.Contains(accept, mediaIpnsRecord) {
		routingError(ctx, http.StatusNotAcceptable, errors.New("content type in 'Accept' header is not supported, retry with 'application/vnd.ipfs.ipns-record'"))
		return
	}
	name, c, ok := ipnsName(ctx, arg)
	if !ok {
		return
	}
	raw, err := s.n.Names().Record(q.ctx, name)
	if errors.Is(err, ds.ErrNotFound) {
		err = routing.ErrNotFound // the local store's word for it
	}
	if err != nil {
		if errors.Is(err, routing.ErrNotFound) {
			// No record is an answer, not an error: 200 in text/plain.
			ctx.Response.Header.Set("Cache-Control", cacheWithoutResults)
			plainError(ctx, http.StatusOK, "delegate error: "+err.Error())
			return
		}
		routingError(ctx, http.StatusInternalServerError, fmt.Errorf("delegate error: %w", err))
		return
	}
	rec, err := ipns.UnmarshalRecord(raw)
	if err != nil {
		routingError(ctx, http.StatusInternalServerError, err)
		return
	}
	h := &ctx.Response.Header
	remaining := 0
	if vt, err := rec.ValidityType(); err == nil && vt == ipns.ValidityEOL {
		if eol, err := rec.Validity(); err == nil {
			h.Set("Expires", eol.UTC().Format(http.TimeFormat))
			remaining = int(time.Until(eol).Seconds())
		}
	}
	ttl := int(ipns.DefaultRecordTTL.Seconds())
	if t, err := rec.TTL(); err == nil {
		ttl = int(t.Seconds())
	}
	if remaining <= 0 {
		h.Set("Cache-Control", "no-store")
	} else {
		maxAge := min(max(0, ttl), remaining)
		stale := remaining - maxAge
		h.Set("Cache-Control", fmt.Sprintf("public, max-age=%d, stale-while-revalidate=%d, stale-if-error=%d", maxAge, stale, stale))
	}
	h.Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
	h.Set("Etag", fmt.Sprintf(`"%x"`, xxhash.Sum64(raw)))
	h.Set("Content-Type", mediaIpnsRecord)
	if name36, err := c.StringOfBase(multibase.Base36); err == nil {
		h.Set("Content-Disposition", `attachment; filename="`+name36+`.ipns-record"`)
	}
	h.Add("Vary", "Accept")
	ctx.SetBody(raw)
}

// routingPutIPNS keeps a signed record of a name and sends it on, as
// name put does, once it is valid for that name.
func (s *Server) routingPutIPNS(ctx *fasthttp.RequestCtx, q *routingQuery, arg string) {
	if !strings.Contains(string(ctx.Request.Header.ContentType()), mediaIpnsRecord) {
		routingError(ctx, http.StatusNotAcceptable, errors.New("content type in 'Content-Type' header is missing or not supported"))
		return
	}
	name, _, ok := ipnsName(ctx, arg)
	if !ok {
		return
	}
	body := ctx.Request.Body()
	if len(body) > ipns.MaxRecordSize {
		body = body[:ipns.MaxRecordSize]
	}
	rec, err := ipns.UnmarshalRecord(body)
	if err != nil {
		routingError(ctx, http.StatusBadRequest, fmt.Errorf("provided record is invalid: %w", err))
		return
	}
	if err := ipns.ValidateWithName(rec, name); err != nil {
		routingError(ctx, http.StatusBadRequest, fmt.Errorf("provided record is invalid: %w", err))
		return
	}
	raw, err := ipns.MarshalRecord(rec)
	if err != nil {
		routingError(ctx, http.StatusInternalServerError, fmt.Errorf("delegate error: %w", err))
		return
	}
	if err := s.n.Names().PutRecord(q.ctx, string(name.RoutingKey()), raw); err != nil {
		routingError(ctx, http.StatusInternalServerError, fmt.Errorf("delegate error: %w", err))
		return
	}
	ctx.SetStatusCode(http.StatusOK)
}

// routingProvide is the deprecated write of bitswap provider records,
// which Kubo's router does not support: an empty list is answered, a
// record of another schema refused, a bitswap record not supported.
func (s *Server) routingProvide(ctx *fasthttp.RequestCtx, _ *routingQuery, _ string) {
	var req struct{ Providers []json.RawMessage }
	if err := json.NewDecoder(bytes.NewReader(ctx.Request.Body())).Decode(&req); err != nil {
		routingError(ctx, http.StatusBadRequest, fmt.Errorf("invalid request: %w", err))
		return
	}
	for i, raw := range req.Providers {
		var rec struct{ Schema string }
		if err := json.Unmarshal(raw, &rec); err != nil {
			routingError(ctx, http.StatusBadRequest, fmt.Errorf("invalid request: %w", err))
			return
		}
		if rec.Schema != "bitswap" {
			routingError(ctx, http.StatusBadRequest, fmt.Errorf("provider record %d is not bitswap", i))
			return
		}
		routingError(ctx, http.StatusInternalServerError, fmt.Errorf("delegate error: %w", routing.ErrNotSupported))
		return
	}
	setRoutingHeaders(ctx, mediaJSON)
	ctx.Response.Header.Set("Cache-Control", cacheWithoutResults)
	ctx.SetBodyString(`{"ProvideResults":null}`)
}

// RoutingAPI says whether the server answers /routing/v1/.
func (s *Server) RoutingAPI() bool { return s.routingAPI }
