// cid.go: the "cid" family: format/base32 (convert CIDs), bases/codecs/
// hashes (list what the multiformats libraries know) and inspect. None of
// them needs a repo.

package commands

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"

	"cairn/rpc"

	"github.com/ipfs/boxo/verifcid"
	"github.com/ipfs/go-cid"
	cidutil "github.com/ipfs/go-cidutil"
	"github.com/libp2p/go-libp2p/core/peer"
	mbase "github.com/multiformats/go-multibase"
	mc "github.com/multiformats/go-multicodec"
	mh "github.com/multiformats/go-multihash"
)

var cidCommands = []*rpc.Command{
	{
		Path:     "cid/format",
		Synopsis: "Format and convert a CID in various useful ways.",
		Help: "Format and converts <cid>'s in various useful ways.\n\n" +
			"For a human-readable breakdown of a CID, see 'cairn cid inspect'.\n\n" +
			"The optional format string is a printf style format string:\n" + cidutil.FormatRef,
		Args: []rpc.Arg{{Name: "cid", Kind: rpc.ArgString, Required: true, Variadic: true, Stdin: true,
			Help: "CIDs to format."}},
		// Kubo gives these options single-letter long names: -f, -v, -b, --mc.
		Options: []rpc.Option{
			{Names: []string{"f"}, Type: rpc.String, Default: "%s", Help: "Printf style format string."},
			{Names: []string{"v"}, Type: rpc.String, Help: "CID version to convert to."},
			{Names: []string{"mc"}, Type: rpc.String, Help: "CID multicodec to convert to."},
			{Names: []string{"b"}, Type: rpc.String, Help: "Multibase to display CID in."},
		},
		BodyArgs: true,
		NoRepo:   true,
		Output:   rpc.OutStream,
		Run:      runCidFormat,
		Type:     func() any { return &CidFormatRes{} },
		Text:     cidFormatText,
		TextDone: cidFormatTextDone,
	},
	{
		Path:     "cid/base32",
		Synopsis: "Convert CIDs to Base32 CID version 1.",
		Help: "'cairn cid base32' normalizes passed CIDs to their canonical case-insensitive encoding.\n" +
			"Useful when processing third-party CIDs which could come with arbitrary formats.",
		Args: []rpc.Arg{{Name: "cid", Kind: rpc.ArgString, Required: true, Variadic: true, Stdin: true,
			Help: "CIDs to convert."}},
		BodyArgs: true,
		NoRepo:   true,
		Output:   rpc.OutStream,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			return emitFormatted(r, e, cidConv{format: "%s", base: mbase.Base32, toVersion: toCidV1})
		},
		Type:     func() any { return &CidFormatRes{} },
		Text:     cidFormatText,
		TextDone: cidFormatTextDone,
	},
	basesCommand("cid/bases", "'cairn cid bases' relies on https://github.com/multiformats/go-multibase"),
	{
		Path:     "cid/codecs",
		Synopsis: "List available CID multicodecs.",
		Help:     "'cairn cid codecs' relies on https://github.com/multiformats/go-multicodec",
		Options:  codeListOptions,
		NoRepo:   true,
		Output:   rpc.OutSingle,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			only := r.Bool("supported")
			list := []CodeAndName{}
			for _, code := range mc.KnownCodes() {
				if code.Tag() != "ipld" {
					continue
				}
				if only && !supportedCodecs[code] {
					continue
				}
				list = append(list, CodeAndName{Code: int(code), Name: code.String()})
			}
			sortByCode(list)
			return e.Emit(&list)
		},
		Type: func() any { return &[]CodeAndName{} },
		Text: codeListText,
	},
	{
		Path:     "cid/hashes",
		Synopsis: "List available multihashes.",
		Help:     "'cairn cid hashes' relies on https://github.com/multiformats/go-multihash",
		Options:  codeListOptions,
		NoRepo:   true,
		Output:   rpc.OutSingle,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			// --supported is accepted but ignored, as in Kubo: every
			// hash the default allowlist accepts is listed.
			list := []CodeAndName{}
			for code, name := range mh.Codes {
				if verifcid.DefaultAllowlist.IsAllowed(code) {
					list = append(list, CodeAndName{Code: int(code), Name: name})
				}
			}
			sortByCode(list)
			return e.Emit(&list)
		},
		Type: func() any { return &[]CodeAndName{} },
		Text: codeListText,
	},
	{
		Path:     "cid/inspect",
		Synopsis: "Inspect and display detailed information about a CID.",
		Help: "'cairn cid inspect' breaks down a CID and displays its components: version,\n" +
			"multibase, multicodec, multihash (function, length, digest) and the\n" +
			"equivalent CIDv0 and CIDv1 forms. For CIDv0 the multibase, multicodec and\n" +
			"multihash are implicit. Use --enc=json for machine-readable output.",
		Args: []rpc.Arg{{Name: "cid", Kind: rpc.ArgString, Required: true, Stdin: true,
			Help: "CID to inspect."}},
		NoRepo: true,
		Output: rpc.OutSingle,
		Run:    runCidInspect,
		Type:   func() any { return &CidInspectRes{} },
		Text:   cidInspectText,
	},
}

// CidFormatRes is one converted CID of cid/format and cid/base32.
type CidFormatRes struct {
	CidStr    string // the input as given
	Formatted string // the result
	ErrorMsg  string // why this entry failed
}

// CodeAndName is one entry of cid/bases, cid/codecs and cid/hashes.
type CodeAndName struct {
	Code int
	Name string
}

var codeListOptions = []rpc.Option{
	{Names: []string{"numeric", "n"}, Type: rpc.Bool, Help: "also include numeric codes"},
	{Names: []string{"supported", "s"}, Type: rpc.Bool, Help: "list only codecs supported by cairn commands"},
}

// supportedCodecs is what `cid codecs --supported` lists. Kubo computes it
// as the codecs with a go-ipld-prime encoder or decoder registered in its
// binary, plus libp2p-key; cairn does not link those codecs, so the set
// Kubo 0.42 reports is written down here.
var supportedCodecs = map[mc.Code]bool{
	mc.Cbor:      true,
	mc.Raw:       true,
	mc.DagPb:     true,
	mc.DagCbor:   true,
	mc.Libp2pKey: true,
	mc.GitRaw:    true,
	mc.DagJose:   true,
	mc.DagJson:   true,
	mc.Json:      true,
}

// cidConv says how cid/format and cid/base32 rewrite each CID.
type cidConv struct {
	format    string
	base      mbase.Encoding // -1: keep the input's base (base58btc for v0)
	codec     uint64         // 0: keep the codec
	toVersion func(cid.Cid) (cid.Cid, error)
}

func runCidFormat(r *rpc.Request, e rpc.Emitter) error {
	format := r.String("f")
	version := r.String("v")
	codec := r.String("mc")
	base := r.String("b")
	conv := cidConv{format: format, base: -1}
	if !strings.Contains(format, "%") {
		return fmt.Errorf("invalid format string: %q", format)
	}
	if codec != "" {
		var code mc.Code
		if err := code.Set(codec); err != nil {
			return err
		}
		conv.codec = uint64(code)
	}
	switch version {
	case "":
		if base != "" {
			conv.toVersion = toCidV1
		}
	case "0":
		if conv.codec != 0 && conv.codec != cid.DagProtobuf {
			return errors.New("cannot convert to CIDv0 with any codec other than dag-pb")
		}
		// Compared by name, as Kubo does: "-b z" is refused too.
		if base != "" && base != "base58btc" {
			return errors.New("cannot convert to CIDv0 with any multibase other than the implicit base58btc")
		}
		conv.toVersion = toCidV0
	case "1":
		conv.toVersion = toCidV1
	default:
		return fmt.Errorf("invalid cid version: %q", version)
	}
	if base != "" {
		enc, err := mbase.EncoderByName(base)
		if err != nil {
			return err
		}
		conv.base = enc.Encoding()
	}
	return emitFormatted(r, e, conv)
}

// emitFormatted converts every argument. A CID that does not decode or
// convert is reported in its entry and the rest go on; a bad format
// string stops the command.
func emitFormatted(r *rpc.Request, e rpc.Emitter, conv cidConv) error {
	for _, s := range r.Args {
		res := &CidFormatRes{CidStr: s}
		out, err := formatOne(s, conv)
		var fse cidutil.FormatStringError
		switch {
		case errors.As(err, &fse):
			return err
		case err != nil:
			res.ErrorMsg = err.Error()
		default:
			res.Formatted = out
		}
		if err := e.Emit(res); err != nil {
			return err
		}
	}
	return nil
}

func formatOne(s string, conv cidConv) (string, error) {
	c, err := cid.Decode(s)
	if err != nil {
		return "", err
	}
	if conv.codec != 0 && conv.codec != c.Type() {
		c = cid.NewCidV1(conv.codec, c.Hash())
	}
	if conv.toVersion != nil {
		if c, err = conv.toVersion(c); err != nil {
			return "", err
		}
	}
	base := conv.base
	if base == -1 {
		base = mbase.Base58BTC
		if c.Version() != 0 {
			// The input decoded, so its multibase prefix is known.
			base, _ = cid.ExtractEncoding(s)
		}
	}
	return cidutil.Format(conv.format, base, c)
}

func toCidV0(c cid.Cid) (cid.Cid, error) {
	if c.Type() != cid.DagProtobuf {
		return cid.Undef, errors.New("can't convert non-dag-pb nodes to cidv0")
	}
	return cid.NewCidV0(c.Hash()), nil
}

func toCidV1(c cid.Cid) (cid.Cid, error) { return cid.NewCidV1(c.Type(), c.Hash()), nil }

// cidFormatState remembers whether some entry failed.
type cidFormatState struct{ failed bool }

func cidFormatText(t *rpc.TextEnv, v any) error {
	res := v.(*CidFormatRes)
	if res.ErrorMsg != "" {
		st, _ := t.State.(*cidFormatState)
		if st == nil {
			st = &cidFormatState{}
			t.State = st
		}
		st.failed = true
		_, err := fmt.Fprintf(t.Err, "%s: %s\n", res.CidStr, res.ErrorMsg)
		return err
	}
	_, err := fmt.Fprintf(t.Out, "%s\n", res.Formatted)
	return err
}

func cidFormatTextDone(t *rpc.TextEnv) error {
	if st, _ := t.State.(*cidFormatState); st != nil && st.failed {
		return errors.New("errors while displaying some entries")
	}
	return nil
}

// sortBases orders multibases by prefix, case-insensitively, the lower
// case one first.
func sortBases(list []CodeAndName) {
	sort.Slice(list, func(i, j int) bool {
		a, b := unicode.ToLower(rune(list[i].Code)), unicode.ToLower(rune(list[j].Code))
		if a != b {
			return a < b
		}
		return list[i].Code > list[j].Code
	})
}

func sortByCode(list []CodeAndName) {
	sort.Slice(list, func(i, j int) bool { return list[i].Code < list[j].Code })
}

func basesText(t *rpc.TextEnv, v any) error {
	list := append([]CodeAndName(nil), *v.(*[]CodeAndName)...)
	sortBases(list)
	prefix := t.Req != nil && t.Req.Bool("prefix")
	numeric := t.Req != nil && t.Req.Bool("numeric")
	for _, b := range list {
		p := rune(b.Code)
		if !unicode.IsPrint(p) {
			p = ' '
		}
		var err error
		switch {
		case prefix && numeric:
			_, err = fmt.Fprintf(t.Out, "%c %7d  %s\n", p, b.Code, b.Name)
		case prefix:
			_, err = fmt.Fprintf(t.Out, "%c  %s\n", p, b.Name)
		case numeric:
			_, err = fmt.Fprintf(t.Out, "%7d  %s\n", b.Code, b.Name)
		default:
			_, err = fmt.Fprintf(t.Out, "%s\n", b.Name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func codeListText(t *rpc.TextEnv, v any) error {
	list := append([]CodeAndName(nil), *v.(*[]CodeAndName)...)
	sortByCode(list)
	numeric := t.Req != nil && t.Req.Bool("numeric")
	for _, c := range list {
		var err error
		if numeric {
			_, err = fmt.Fprintf(t.Out, "%5d  %s\n", c.Code, c.Name)
		} else {
			_, err = fmt.Fprintf(t.Out, "%s\n", c.Name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// CidInspectRes is the breakdown cid/inspect returns.
type CidInspectRes struct {
	Cid        string          `json:"cid"`
	Version    int             `json:"version"`
	Multibase  CidInspectBase  `json:"multibase"`
	Multicodec CidInspectCodec `json:"multicodec"`
	Multihash  CidInspectHash  `json:"multihash"`
	CidV0      string          `json:"cidV0,omitempty"`
	CidV1      string          `json:"cidV1"`
	ErrorMsg   string          `json:"errorMsg,omitempty"`
}

// CidInspectBase is the multibase of the inspected string.
type CidInspectBase struct {
	Prefix string `json:"prefix"`
	Name   string `json:"name"`
}

// CidInspectCodec is the CID's content codec.
type CidInspectCodec struct {
	Code uint64 `json:"code"`
	Name string `json:"name"`
}

// CidInspectHash is the CID's multihash, digest in hex.
type CidInspectHash struct {
	Code   uint64 `json:"code"`
	Name   string `json:"name"`
	Length int    `json:"length"`
	Digest string `json:"digest"`
}

func runCidInspect(r *rpc.Request, e rpc.Emitter) error {
	s := r.Args[0]
	c, err := cid.Decode(s)
	if err != nil {
		msg := "invalid CID: " + err.Error()
		// A legacy PeerID (Qm.../12D3KooW...) is not a CID: say which
		// CID stands for it.
		if pid, perr := peer.Decode(s); perr == nil {
			if v1, err := peer.ToCid(pid).StringOfBase(mbase.Base36); err == nil {
				msg += "\nNote: the value is a PeerID; inspect its CID representation instead:\n  " + v1
			}
		}
		return e.Emit(&CidInspectRes{Cid: s, ErrorMsg: msg})
	}
	res := &CidInspectRes{Cid: s, Version: int(c.Version())}
	if c.Version() == 0 {
		res.Multibase = CidInspectBase{Prefix: "z", Name: "base58btc"}
	} else {
		enc, _ := cid.ExtractEncoding(s)
		res.Multibase = CidInspectBase{Prefix: string(rune(enc)), Name: mbase.EncodingToStr[enc]}
	}
	codecName := mc.Code(c.Type()).String()
	if codecName == "" || strings.HasPrefix(codecName, "Code(") {
		codecName = "unknown"
	}
	res.Multicodec = CidInspectCodec{Code: c.Type(), Name: codecName}
	dec, err := mh.Decode(c.Hash())
	if err != nil {
		return e.Emit(&CidInspectRes{Cid: s, ErrorMsg: "failed to decode multihash: " + err.Error()})
	}
	hashName := mh.Codes[dec.Code]
	if hashName == "" {
		hashName = "unknown"
	}
	res.Multihash = CidInspectHash{Code: dec.Code, Name: hashName, Length: dec.Length,
		Digest: hex.EncodeToString(dec.Digest)}
	if c.Type() == cid.DagProtobuf && dec.Code == mh.SHA2_256 && dec.Length == 32 {
		res.CidV0 = cid.NewCidV0(c.Hash()).String()
	}
	v1 := cid.NewCidV1(c.Type(), c.Hash())
	v1Base := mbase.Encoding(mbase.Base32)
	if c.Type() == uint64(mc.Libp2pKey) {
		v1Base = mbase.Base36
	}
	if res.CidV1, err = v1.StringOfBase(v1Base); err != nil {
		res.CidV1 = v1.String()
	}
	return e.Emit(res)
}

func cidInspectText(t *rpc.TextEnv, v any) error {
	res := v.(*CidInspectRes)
	if res.ErrorMsg != "" {
		return errors.New(res.ErrorMsg)
	}
	implicit := ""
	if res.Version == 0 {
		implicit = ", implicit"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CID:        %s\n", res.Cid)
	fmt.Fprintf(&b, "Version:    %d\n", res.Version)
	if res.Version == 0 {
		fmt.Fprintf(&b, "Multibase:  %s (implicit)\n", res.Multibase.Name)
	} else {
		fmt.Fprintf(&b, "Multibase:  %s (%s)\n", res.Multibase.Name, res.Multibase.Prefix)
	}
	fmt.Fprintf(&b, "Multicodec: %s (0x%x%s)\n", res.Multicodec.Name, res.Multicodec.Code, implicit)
	fmt.Fprintf(&b, "Multihash:  %s (0x%x%s)\n", res.Multihash.Name, res.Multihash.Code, implicit)
	fmt.Fprintf(&b, "  Length:   %d bytes\n", res.Multihash.Length)
	fmt.Fprintf(&b, "  Digest:   %s\n", res.Multihash.Digest)
	switch {
	case res.CidV0 != "":
		fmt.Fprintf(&b, "CIDv0:      %s\n", res.CidV0)
	case res.Multicodec.Code != cid.DagProtobuf:
		fmt.Fprintf(&b, "CIDv0:      not possible, requires dag-pb (0x70), got %s (0x%x)\n",
			res.Multicodec.Name, res.Multicodec.Code)
	case res.Multihash.Code != mh.SHA2_256:
		fmt.Fprintf(&b, "CIDv0:      not possible, requires sha2-256 (0x12), got %s (0x%x)\n",
			res.Multihash.Name, res.Multihash.Code)
	case res.Multihash.Length != 32:
		fmt.Fprintf(&b, "CIDv0:      not possible, requires 32-byte digest, got %d\n", res.Multihash.Length)
	}
	fmt.Fprintf(&b, "CIDv1:      %s\n", res.CidV1)
	_, err := io.WriteString(t.Out, b.String())
	return err
}

// basesCommand lists the multibase encodings; cid bases and multibase
// list are the same command under two paths.
func basesCommand(path, help string) *rpc.Command {
	return &rpc.Command{
		Path:     path,
		Synopsis: "List available multibase encodings.",
		Help:     help,
		Options: []rpc.Option{
			{Names: []string{"prefix"}, Type: rpc.Bool, Help: "also include the single letter prefixes in addition to the code"},
			{Names: []string{"numeric"}, Type: rpc.Bool, Help: "also include numeric codes"},
		},
		NoRepo: true,
		Output: rpc.OutSingle,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			list := make([]CodeAndName, 0, len(mbase.EncodingToStr))
			for code, name := range mbase.EncodingToStr {
				list = append(list, CodeAndName{Code: int(code), Name: name})
			}
			sortBases(list)
			return e.Emit(&list)
		},
		Type: func() any { return &[]CodeAndName{} },
		Text: basesText,
	}
}
