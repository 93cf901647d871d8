// pin.go: the "pin" family: pin/add, pin/ls, pin/rm, pin/update,
// pin/verify (local pins; pin/remote/* are in remotepin.go).

package commands

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/go-cid"
)

var pinCommands = []*rpc.Command{
	{
		Path:     "pin/add",
		Synopsis: "Pin objects to local storage.",
		Help:     "Stores an IPFS object(s) from a given path locally to disk. The DAG must be stored locally (there is no network fetch yet).",
		Args: []rpc.Arg{{Name: "ipfs-path", Kind: rpc.ArgString, Required: true, Variadic: true, Stdin: true,
			Help: "Path to object(s) to be pinned."}},
		Options: []rpc.Option{
			{Names: []string{"recursive", "r"}, Type: rpc.Bool, Default: true, Help: "Recursively pin the object linked to by the specified object(s)."},
			{Names: []string{"name", "n"}, Type: rpc.String, Help: "An optional name for created pin(s)."},
			{Names: []string{"progress"}, Type: rpc.Bool, Help: "Show progress."},
		},
		BodyArgs:  true,
		Output:    rpc.OutSingle,
		OutputFor: streamIf("progress"),
		Run:       runPinAdd,
		Type:      func() any { return &PinOutput{} },
		Text:      pinAddText,
	},
	{
		Path:     "pin/ls",
		Synopsis: "List objects pinned to local storage.",
		Args: []rpc.Arg{{Name: "ipfs-path", Kind: rpc.ArgString, Variadic: true, Stdin: true,
			Help: "Path to object(s) to be listed."}},
		Options: []rpc.Option{
			{Names: []string{"type", "t"}, Type: rpc.String, Default: "all", Help: `The type of pinned keys to list. Can be "direct", "indirect", "recursive", or "all".`},
			{Names: []string{"quiet", "q"}, Type: rpc.Bool, Help: "Write just hashes of objects."},
			{Names: []string{"stream", "s"}, Type: rpc.Bool, Help: "Enable streaming of pins as they are discovered."},
			{Names: []string{"name", "n"}, Type: rpc.String, Help: "Limit returned pins to ones with names that contain the value provided (case-sensitive, partial match). Implies --names=true."},
			{Names: []string{"names"}, Type: rpc.Bool, Help: "Include pin names in the output (slower, disabled by default)."},
		},
		BodyArgs:  true,
		Output:    rpc.OutSingle,
		OutputFor: streamIf("stream"),
		Run:       runPinLs,
		Type: func() any {
			return &PinLsOutput{}
		},
		Text: pinLsText,
	},
	{
		Path:     "pin/rm",
		Synopsis: "Remove object from pin-list.",
		Args: []rpc.Arg{{Name: "ipfs-path", Kind: rpc.ArgString, Required: true, Variadic: true, Stdin: true,
			Help: "Path to object(s) to be unpinned."}},
		Options: []rpc.Option{
			{Names: []string{"recursive", "r"}, Type: rpc.Bool, Default: true, Help: "Recursively unpin the object linked to by the specified object(s)."},
		},
		BodyArgs: true,
		Output:   rpc.OutSingle,
		Run:      runPinRm,
		Type:     func() any { return &PinOutput{} },
		Text: func(t *rpc.TextEnv, v any) error {
			for _, p := range v.(*PinOutput).Pins {
				fmt.Fprintf(t.Out, "unpinned %s\n", p)
			}
			return nil
		},
	},
	{
		Path:     "pin/update",
		Synopsis: "Update a recursive pin.",
		Help:     "Efficiently pins a new object based on differences from an existing one and, by default, removes the old pin.",
		Args: []rpc.Arg{
			{Name: "from-path", Kind: rpc.ArgString, Required: true, Help: "Path to old object."},
			{Name: "to-path", Kind: rpc.ArgString, Required: true, Help: "Path to a new object to be pinned."},
		},
		Options: []rpc.Option{{Names: []string{"unpin"}, Type: rpc.Bool, Default: true, Help: "Remove the old pin."}},
		Output:  rpc.OutSingle,
		Run:     runPinUpdate,
		Type:    func() any { return &PinOutput{} },
		Text: func(t *rpc.TextEnv, v any) error {
			p := v.(*PinOutput).Pins
			if len(p) == 2 {
				fmt.Fprintf(t.Out, "updated %s to %s\n", p[0], p[1])
			}
			return nil
		},
	},
	{
		Path:     "pin/verify",
		Synopsis: "Verify that recursive pins are complete.",
		Options: []rpc.Option{
			{Names: []string{"verbose"}, Type: rpc.Bool, Help: "Also write the hashes of non-broken pins."},
			{Names: []string{"quiet", "q"}, Type: rpc.Bool, Help: "Write just hashes of broken pins."},
		},
		Output: rpc.OutStream,
		Run:    runPinVerify,
		Type:   func() any { return &PinVerifyRes{} },
		Text:   pinVerifyText,
	},
}

// PinOutput is the body of pin/add, pin/rm and pin/update; with
// progress, pin/add streams {"Progress":N} lines first.
type PinOutput struct {
	Pins     []string `json:",omitempty"`
	Progress int      `json:",omitempty"`
	Bytes    uint64   `json:",omitempty"`
}

// PinLsType is one value of pin/ls's Keys map.
type PinLsType struct {
	Type string
	Name string
}

// PinLsOutput is either shape of pin/ls: {"Keys":{...}}, or with stream
// one {"Cid","Type","Name"} per line.
type PinLsOutput struct {
	Keys map[string]PinLsType `json:",omitempty"`
	Cid  string               `json:",omitempty"`
	Type string               `json:",omitempty"`
	Name string               `json:",omitempty"`
}

// PinVerifyRes is one line of pin/verify.
type PinVerifyRes struct {
	Cid      string
	Ok       bool
	BadNodes []BadNode `json:",omitempty"`
}

// BadNode is a broken block of a pinned DAG.
type BadNode struct {
	Cid string
	Err string
}

func resolveAll(r *rpc.Request) ([]cid.Cid, error) {
	var out []cid.Cid
	for _, a := range r.Args {
		c, err := resolveRoot(r.Ctx, r.Node, a)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func runPinAdd(r *rpc.Request, e rpc.Emitter) error {
	cs, err := resolveAll(r)
	if err != nil {
		return err
	}
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	rec, name := r.Bool("recursive"), r.String("name")
	// Kubo's progress tracker counts blocks and bytes over all the pins.
	var seen, seenBytes atomic.Int64
	var base int64 // bytes of the pins done (the pin goroutine's)
	var progress func(int, uint64)
	if r.Bool("progress") {
		progress = func(_ int, b uint64) { seen.Add(1); seenBytes.Store(base + int64(b)) }
	}
	pin := func() error {
		for _, c := range cs {
			base = seenBytes.Load()
			err := r.Node.Pins().Add(r.Ctx, c, rec, name, progress)
			if err != nil {
				return fmt.Errorf("pin: %w", err)
			}
		}
		return nil
	}
	out := &PinOutput{}
	for _, c := range cs {
		out.Pins = append(out.Pins, enc.Encode(c))
	}
	if !r.Bool("progress") {
		if err := pin(); err != nil {
			return err
		}
		return e.Emit(out)
	}
	done := make(chan error, 1)
	go func() { done <- pin() }()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			if n := seen.Load(); n > 0 {
				if err := e.Emit(&PinOutput{Progress: int(n), Bytes: uint64(seenBytes.Load())}); err != nil {
					return err
				}
			}
			return e.Emit(out)
		case <-tick.C:
			if err := e.Emit(&PinOutput{Progress: int(seen.Load()), Bytes: uint64(seenBytes.Load())}); err != nil {
				return err
			}
		}
	}
}

func pinAddText(t *rpc.TextEnv, v any) error {
	o := v.(*PinOutput)
	if o.Pins == nil {
		if t.TTY {
			fmt.Fprintf(t.Err, "\033[2K\rFetched/Processed %d nodes", o.Progress)
		}
		return nil
	}
	if t.TTY && t.Req != nil && t.Req.Bool("progress") {
		fmt.Fprint(t.Err, "\033[2K\r")
	}
	how := "recursively"
	if t.Req != nil && t.Req.IsSet("recursive") && !t.Req.Bool("recursive") {
		how = "directly"
	}
	for _, p := range o.Pins {
		fmt.Fprintf(t.Out, "pinned %s %s\n", p, how)
	}
	return nil
}

var pinTypes = map[string]bool{"direct": true, "indirect": true, "recursive": true, "all": true}

func runPinLs(r *rpc.Request, e rpc.Emitter) error {
	typ := r.String("type")
	if !pinTypes[typ] {
		return fmt.Errorf("invalid type '%s', must be one of {direct, indirect, recursive, all}", typ)
	}
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	stream := r.Bool("stream")
	keys := map[string]PinLsType{}
	filter := r.String("name")
	if err := validatePinName(filter); err != nil {
		return err
	}
	names := r.Bool("names") || filter != ""
	emit := func(c cid.Cid, t, name string) error {
		if !names {
			name = ""
		}
		if stream {
			return e.Emit(&PinLsOutput{Cid: enc.Encode(c), Type: t, Name: name})
		}
		keys[enc.Encode(c)] = PinLsType{Type: t, Name: name}
		return nil
	}
	if len(r.Args) > 0 {
		for _, a := range r.Args {
			c, err := resolveRoot(r.Ctx, r.Node, a)
			if err != nil {
				return err
			}
			kind, via, err := r.Node.Pins().State(r.Ctx, c, typ)
			if err != nil {
				return err
			}
			if kind == node.PinIndirectType {
				kind = "indirect through " + enc.Encode(via)
			}
			if kind == "" || (typ != "all" && !strings.HasPrefix(kind, typ)) {
				return fmt.Errorf("path '%s' is not pinned", a)
			}
			if err := emit(c, kind, pinName(r, c)); err != nil {
				return err
			}
		}
	} else {
		if typ != "indirect" {
			want := typ
			if want == "all" {
				want = ""
			}
			pins, err := r.Node.Pins().List(r.Ctx, want)
			if err != nil {
				return err
			}
			for _, p := range pins {
				if filter != "" && !strings.Contains(p.Name, filter) {
					continue
				}
				if err := emit(p.Cid, p.Type, p.Name); err != nil {
					return err
				}
			}
		}
		// Indirect pins have no name: a name filter leaves none (Kubo).
		if (typ == "indirect" || typ == "all") && filter == "" {
			err := r.Node.Pins().ForEachIndirect(r.Ctx, func(c, _ cid.Cid) error { return emit(c, node.PinIndirectType, "") })
			if err != nil {
				return err
			}
		}
	}
	if stream {
		return nil
	}
	return e.Emit(&PinLsOutput{Keys: keys})
}

func pinName(r *rpc.Request, c cid.Cid) string {
	pins, err := r.Node.Pins().List(r.Ctx, "")
	if err != nil {
		return ""
	}
	for _, p := range pins {
		if p.Cid.Equals(c) {
			return p.Name
		}
	}
	return ""
}

func pinLsText(t *rpc.TextEnv, v any) error {
	o := v.(*PinLsOutput)
	quiet := t.Req != nil && t.Req.Bool("quiet")
	names := t.Req != nil && (t.Req.Bool("names") || t.Req.String("name") != "")
	line := func(c string, p PinLsType) {
		switch {
		case quiet:
			fmt.Fprintln(t.Out, c)
		case names && p.Name != "":
			fmt.Fprintf(t.Out, "%s %s %s\n", c, p.Type, p.Name)
		default:
			fmt.Fprintf(t.Out, "%s %s\n", c, p.Type)
		}
	}
	if o.Keys == nil {
		if o.Cid != "" {
			line(o.Cid, PinLsType{Type: o.Type, Name: o.Name})
		}
		return nil
	}
	ks := make([]string, 0, len(o.Keys))
	for k := range o.Keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		line(k, o.Keys[k])
	}
	return nil
}

func runPinRm(r *rpc.Request, e rpc.Emitter) error {
	cs, err := resolveAll(r)
	if err != nil {
		return err
	}
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	out := &PinOutput{}
	for _, c := range cs {
		if err := r.Node.Pins().Remove(r.Ctx, c, r.Bool("recursive")); err != nil {
			return err
		}
		out.Pins = append(out.Pins, enc.Encode(c))
	}
	return e.Emit(out)
}

func runPinUpdate(r *rpc.Request, e rpc.Emitter) error {
	from, err := resolveRoot(r.Ctx, r.Node, r.Args[0])
	if err != nil {
		return err
	}
	to, err := resolveRoot(r.Ctx, r.Node, r.Args[1])
	if err != nil {
		return err
	}
	if err := r.Node.Pins().Update(r.Ctx, from, to, r.Bool("unpin")); err != nil {
		return err
	}
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	return e.Emit(&PinOutput{Pins: []string{enc.Encode(from), enc.Encode(to)}})
}

func runPinVerify(r *rpc.Request, e rpc.Emitter) error {
	pins, err := r.Node.Pins().List(r.Ctx, node.PinRecursiveType)
	if err != nil {
		return err
	}
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	for _, p := range pins {
		res := &PinVerifyRes{Cid: enc.Encode(p.Cid), Ok: true}
		werr := r.Node.Dag().Verify(r.Ctx, p.Cid, func(c cid.Cid, err error) {
			res.Ok = false
			res.BadNodes = append(res.BadNodes, BadNode{Cid: enc.Encode(c), Err: err.Error()})
		})
		if errors.Is(werr, context.Canceled) {
			return werr
		}
		if res.Ok && !r.Bool("verbose") {
			continue
		}
		if err := e.Emit(res); err != nil {
			return err
		}
	}
	return nil
}

func pinVerifyText(t *rpc.TextEnv, v any) error {
	o := v.(*PinVerifyRes)
	if t.Req != nil && t.Req.Bool("quiet") {
		if !o.Ok {
			fmt.Fprintln(t.Out, o.Cid)
		}
		return nil
	}
	if o.Ok {
		fmt.Fprintf(t.Out, "%s ok\n", o.Cid)
		return nil
	}
	fmt.Fprintf(t.Out, "%s broken\n", o.Cid)
	for _, b := range o.BadNodes {
		fmt.Fprintf(t.Out, "  %s: %s\n", b.Cid, b.Err)
	}
	return nil
}
