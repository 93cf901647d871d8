// codec.go: blocks of the data codecs (dag-json, dag-cbor, json, cbor):
// answered as they are stored, in their own media type, or as an HTML
// page for a browser; dag-json and dag-cbor of another codec only where
// Gateway.AllowCodecConversion allows it.

package gateway

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"

	"cairn/node"

	"github.com/ipfs/go-cid"
	"github.com/ipld/go-ipld-prime/codec/dagjson"
	"github.com/ipld/go-ipld-prime/multicodec"
	mc "github.com/multiformats/go-multicodec"
)

// codecType is the media type of a block of each data codec.
var codecType = map[uint64]string{
	uint64(mc.Json): fmtJSON, uint64(mc.Cbor): fmtCBOR,
	uint64(mc.DagJson): fmtDagJSON, uint64(mc.DagCbor): fmtDagCBOR,
}

// asIs are the codecs whose blocks a format answers unchanged.
var asIs = map[string][]uint64{
	fmtJSON: {uint64(mc.Json), uint64(mc.DagJson)}, fmtCBOR: {uint64(mc.Cbor), uint64(mc.DagCbor)},
	fmtDagJSON: {uint64(mc.DagJson)}, fmtDagCBOR: {uint64(mc.DagCbor)},
}

// convertTo are the codecs a block may be converted to.
var convertTo = map[string]uint64{fmtDagJSON: uint64(mc.DagJson), fmtDagCBOR: uint64(mc.DagCbor)}

// dagEtag is the ETag of the HTML page of a data block.
func dagEtag(c cid.Cid) string { return `"DagIndex-` + listingHash + `_CID-` + c.String() + `"` }

// serveCodec answers the resolved block as a data document.
func (rq *request) serveCodec() bool {
	c := rq.res.Cid
	blk, err := rq.s.n.Block().Get(rq.rctx, c)
	if err != nil {
		rq.failResolve(err)
		return false
	}
	data := blk.RawData()
	ty := rq.format
	if ty == "" {
		ty = codecType[c.Type()]
	}
	h := &rq.ctx.Response.Header
	rq.headers(noTime)
	rq.codecDisposition(c, ty)
	h.Set("Content-Type", ty)
	h.Set("X-Content-Type-Options", "nosniff")
	if rq.format == "" {
		isDAG := c.Type() == uint64(mc.DagJson) || c.Type() == uint64(mc.DagCbor)
		browser := strings.Contains(string(rq.ctx.Request.Header.Peek("Accept")), "text/html")
		if isDAG && browser && string(rq.ctx.QueryArgs().Peek("download")) != "true" {
			return rq.serveDagPage(c, data)
		}
		return rq.serveContent(bytesReader(data), int64(len(data)), ty)
	}
	for _, k := range asIs[rq.format] {
		if c.Type() == k {
			return rq.serveContent(bytesReader(data), int64(len(data)), ty)
		}
	}
	to, ok := convertTo[rq.format]
	if !ok {
		rq.fail(http.StatusBadRequest, "converting to requested format is not supported")
		return false
	}
	if !rq.s.cfg.AllowCodecConversion.WithDefault(false) {
		rq.fail(http.StatusNotAcceptable, fmt.Sprintf("format %q requested but block has codec %q: codec conversion is not supported, fetch raw block with ?format=raw and convert client-side",
			rq.format, mc.Code(c.Type()).String()))
		return false
	}
	nd, err := node.DecodeBlock(c, data)
	if err != nil {
		rq.fail(http.StatusInternalServerError, err.Error())
		return false
	}
	enc, err := multicodec.LookupEncoder(to)
	if err != nil {
		rq.fail(http.StatusInternalServerError, err.Error())
		return false
	}
	var buf bytes.Buffer
	if err := enc(nd, &buf); err != nil {
		rq.fail(http.StatusInternalServerError, err.Error())
		return false
	}
	rq.ctx.SetBody(buf.Bytes())
	return false
}

// codecDisposition names the document: ?filename=, else <cid>.json or
// <cid>.cbor (.bin for other types); inline for JSON, attachment for
// binary types or with download=true.
func (rq *request) codecDisposition(c cid.Cid, ty string) {
	ext := ".bin"
	switch ty {
	case fmtJSON, fmtDagJSON:
		ext = ".json"
	case fmtCBOR, fmtDagCBOR:
		ext = ".cbor"
	}
	name := string(rq.ctx.QueryArgs().Peek("filename"))
	if name == "" {
		name = c.String() + ext
	}
	kind := "attachment"
	if ext == ".json" && string(rq.ctx.QueryArgs().Peek("download")) != "true" {
		kind = "inline"
	}
	setDisposition(&rq.ctx.Response.Header, kind, name)
}

// serveDagPage answers a browser with a page showing the block as
// dag-json, after the trailing-slash redirect directories get.
func (rq *request) serveDagPage(c cid.Cid, data []byte) bool {
	if rq.redirectToSlash() {
		return false
	}
	h := &rq.ctx.Response.Header
	h.Set("Content-Type", "text/html")
	h.Del("Content-Disposition")
	h.Del("Cache-Control")
	h.Set("Etag", dagEtag(c))
	var doc bytes.Buffer
	if nd, err := node.DecodeBlock(c, data); err == nil {
		_ = dagjson.Encode(nd, &doc)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>%s</title></head>\n<body>\n", html.EscapeString(rq.content.String()))
	fmt.Fprintf(&b, "<header><strong>%s</strong> (%s, 0x%x)</header>\n", html.EscapeString(c.String()), mc.Code(c.Type()).String(), c.Type())
	fmt.Fprintf(&b, "<p><a href=\"?format=raw&amp;download=true\">raw block</a> &middot; <a href=\"?format=%s&amp;download=true\">as stored</a></p>\n",
		url.QueryEscape(strings.TrimPrefix(codecType[c.Type()], "application/vnd.ipld.")))
	fmt.Fprintf(&b, "<pre>%s</pre>\n</body>\n</html>\n", html.EscapeString(doc.String()))
	io.WriteString(rq.ctx, b.String())
	return false
}
