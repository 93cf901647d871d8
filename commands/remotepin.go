// remotepin.go: the "pin/remote" family: pin/remote/add, ls, rm and
// pin/remote/service/add, ls, rm, against services that speak the IPFS
// Pinning Service API (boxo's client), as Kubo 0.42's. The services live
// in the config (Pinning.RemoteServices, node/remotepin.go); their keys
// are secrets: no output and no error of this file ever holds one.

package commands

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"cairn/node"
	"cairn/node/pinsvc"
	"cairn/rpc"

	pinclient "github.com/ipfs/boxo/pinning/remote/client"
	"github.com/ipfs/go-cid"
)

var (
	remoteServiceOpt = rpc.Option{Names: []string{"service"}, Type: rpc.String, Help: "Name of the remote pinning service to use (mandatory)."}
	remoteStatusHelp = "Return pins with the specified statuses (queued,pinning,pinned,failed)."
)

var remotePinCommands = []*rpc.Command{
	{
		Path:     "pin/remote/add",
		Synopsis: "Pin object to remote pinning service.",
		Help: `Asks remote pinning service to pin an IPFS object from a given path or a CID.

To pin CID 'bafkqaaa' to service named 'mysrv' under a pin named 'mypin':

  $ cairn pin remote add --service=mysrv --name=mypin bafkqaaa

The command waits until the service reports 'pinned' (or fails on 'failed'),
showing the status as it changes (--progress, on by default on a terminal).
While it waits, and while a --background request is pending, the node keeps
the blocks from garbage collection and serves them: when it holds the CID
it sends its own addresses to the service as origins.

With '--background' it returns as soon as the service has queued the request;
check it with 'cairn pin remote ls --status=queued,pinning,pinned,failed'.`,
		Args: []rpc.Arg{{Name: "ipfs-path", Kind: rpc.ArgString, Required: true, Help: "CID or Path to be pinned."}},
		Options: []rpc.Option{
			remoteServiceOpt,
			{Names: []string{"name"}, Type: rpc.String, Help: "An optional name for the pin."},
			{Names: []string{"background"}, Type: rpc.Bool, Default: false, Help: "Add to the queue on the remote service and return immediately (does not wait for pinned status)."},
			{Names: []string{"progress"}, Type: rpc.Bool, Help: "Stream the status as it changes while waiting (cairn's; one {Status,Cid,Name} per change, then the final one)."},
		},
		Output:    rpc.OutSingle,
		OutputFor: streamIf("progress"),
		Run:       runRemotePinAdd,
		Type:      func() any { return &RemotePinOutput{} },
		Text:      remotePinAddText,
		PreRun: func(opts map[string]string, t *rpc.TextEnv) {
			if _, set := opts["progress"]; !set && t.TTY {
				opts["progress"] = "true"
			}
		},
	},
	{
		Path:     "pin/remote/ls",
		Synopsis: "List objects pinned to remote pinning service.",
		Help: `Returns a list of objects that are pinned to a remote pinning service.

NOTE: By default, it will only show matching objects in 'pinned' state.
Pass '--status=queued,pinning,pinned,failed' to list pins in all states.`,
		Options: []rpc.Option{
			remoteServiceOpt,
			{Names: []string{"name"}, Type: rpc.String, Help: "Return pins with names that contain the value provided (case-sensitive, exact match)."},
			{Names: []string{"cid"}, Type: rpc.StringList, Help: "Return pins for the specified CIDs (comma-separated)."},
			{Names: []string{"status"}, Type: rpc.StringList, Default: []string{"pinned"}, Help: remoteStatusHelp},
		},
		Output: rpc.OutStream,
		Run:    runRemotePinLs,
		Type:   func() any { return &RemotePinOutput{} },
		Text: func(t *rpc.TextEnv, v any) error {
			o := v.(*RemotePinOutput)
			_, err := fmt.Fprintf(t.Out, "%s\t%s\t%s\n", o.Cid, o.Status, EscNonPrint(o.Name))
			return err
		},
	},
	{
		Path:     "pin/remote/rm",
		Synopsis: "Remove pins from remote pinning service.",
		Help: `Removes remote pins, allowing them to be garbage-collected if needed.

This command accepts the same search query parameters as 'ls'. When more than
one pin matches the query an error is returned; pass '--force' to confirm the
removal of several pins.

NOTE: When no '--status' is passed, implicit '--status=pinned' is used.`,
		Options: []rpc.Option{
			remoteServiceOpt,
			{Names: []string{"name"}, Type: rpc.String, Help: "Remove pins with names that contain provided value (case-sensitive, exact match)."},
			{Names: []string{"cid"}, Type: rpc.StringList, Help: "Remove pins for the specified CIDs."},
			{Names: []string{"status"}, Type: rpc.StringList, Default: []string{"pinned"}, Help: "Remove pins with the specified statuses (queued,pinning,pinned,failed)."},
			{Names: []string{"force"}, Type: rpc.Bool, Default: false, Help: "Allow removal of multiple pins matching the query without additional confirmation."},
		},
		Output: rpc.OutNone,
		Run:    runRemotePinRm,
	},
	{
		Path:     "pin/remote/service/add",
		Synopsis: "Add remote pinning service.",
		Help: `Add credentials for access to a remote pinning service and store them in the
config under Pinning.RemoteServices map. The key is kept with the node's other
secrets (the config file, mode 0600) and is never shown by 'service ls',
'config show' or any error.`,
		Args: []rpc.Arg{
			{Name: "service", Kind: rpc.ArgString, Required: true, Help: "Service name."},
			{Name: "endpoint", Kind: rpc.ArgString, Required: true, Help: "Service endpoint."},
			{Name: "key", Kind: rpc.ArgString, Required: true, Secret: true, Help: "Service key."},
		},
		Output: rpc.OutNone,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			return r.Node.RemotePins().AddService(r.Args[0], r.Args[1], r.Args[2])
		},
	},
	{
		Path:     "pin/remote/service/rm",
		Synopsis: "Remove remote pinning service.",
		Args:     []rpc.Arg{{Name: "service", Kind: rpc.ArgString, Required: true, Help: "Name of remote pinning service to remove."}},
		Output:   rpc.OutNone,
		Run:      func(r *rpc.Request, e rpc.Emitter) error { return r.Node.RemotePins().RemoveService(r.Args[0]) },
	},
	{
		Path:     "pin/remote/service/ls",
		Synopsis: "List remote pinning services.",
		Help: `By default, only a name and an endpoint are listed; however, one can pass
'--stat' to test each endpoint by fetching pin counts for each state:

  $ cairn pin remote service ls --stat
  goodsrv   https://pin-api.example.com 0/0/0/0
  badsrv    https://bad-api.example.com invalid`,
		Options: []rpc.Option{{Names: []string{"stat"}, Type: rpc.Bool, Default: false,
			Help: "Try to fetch and display current pin count on remote service (queued/pinning/pinned/failed)."}},
		Output: rpc.OutSingle,
		Run:    runRemoteServiceLs,
		Type:   func() any { return &PinServicesList{} },
		Text:   remoteServiceLsText,
	},
}

// RemotePinOutput is one pin request of pin/remote/add and ls.
type RemotePinOutput struct {
	Status string
	Cid    string
	Name   string
}

// PinServicesList is the body of pin/remote/service/ls.
type PinServicesList struct {
	RemoteServices []ServiceDetails
}

// ServiceDetails is one service; Stat only with --stat.
type ServiceDetails struct {
	Service     string
	ApiEndpoint string       //nolint:revive // Kubo's name
	Stat        *ServiceStat `json:",omitempty"`
}

// ServiceStat says whether the service answered, with its counts.
type ServiceStat struct {
	Status   string
	PinCount *PinCount `json:",omitempty"`
}

// PinCount is a service's pin requests per status.
type PinCount struct {
	Queued  int
	Pinning int
	Pinned  int
	Failed  int
}

// remoteServiceFor returns the client of the request's --service.
func remoteServiceFor(r *rpc.Request) (*pinsvc.Client, error) {
	if !r.IsSet("service") {
		return nil, errors.New("a service name must be passed")
	}
	return r.Node.RemotePins().Client(r.String("service"))
}

func toRemotePinOutput(ps pinclient.PinStatusGetter, enc rpc.CidEncoder) *RemotePinOutput {
	return &RemotePinOutput{
		Name:   ps.GetPin().GetName(),
		Status: ps.GetStatus().String(),
		Cid:    enc.Encode(ps.GetPin().GetCid()),
	}
}

func runRemotePinAdd(r *rpc.Request, e rpc.Emitter) error {
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	svc, err := remoteServiceFor(r)
	if err != nil {
		return err
	}
	root, err := resolveRoot(r.Ctx, r.Node, r.Args[0])
	if err != nil {
		return err
	}
	o := node.RemotePinOptions{Background: r.Bool("background")}
	if r.IsSet("name") {
		if err := validatePinName(r.String("name")); err != nil {
			return err
		}
		o.Name = r.String("name")
	}
	if r.Bool("progress") {
		o.Progress = func(ps pinclient.PinStatusGetter) error { return e.Emit(toRemotePinOutput(ps, enc)) }
	}
	ps, err := r.Node.RemotePins().Pin(r.Ctx, svc, root, o)
	if err != nil {
		return err
	}
	return e.Emit(toRemotePinOutput(ps, enc))
}

// remotePinAddText prints the final request as Kubo does; with progress,
// the statuses before it go to stderr.
func remotePinAddText(t *rpc.TextEnv, v any) error {
	o := v.(*RemotePinOutput)
	progress := t.Req != nil && t.Req.Bool("progress") && !(t.Req.Bool("background"))
	if progress && o.Status != string(pinclient.StatusPinned) {
		if t.TTY {
			_, err := fmt.Fprintf(t.Err, "\033[2K\rremote pin %s: %s", o.Cid, o.Status)
			return err
		}
		_, err := fmt.Fprintf(t.Err, "remote pin %s: %s\n", o.Cid, o.Status)
		return err
	}
	if progress && t.TTY {
		fmt.Fprint(t.Err, "\033[2K\r")
	}
	tw := tabwriter.NewWriter(t.Out, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "CID:\t%s\n", o.Cid)
	fmt.Fprintf(tw, "Name:\t%s\n", o.Name)
	fmt.Fprintf(tw, "Status:\t%s\n", o.Status)
	return tw.Flush()
}

// remoteLsOptions turns ls and rm's filters into the client's options.
func remoteLsOptions(r *rpc.Request) ([]pinclient.LsOption, error) {
	var opts []pinclient.LsOption
	if r.IsSet("name") {
		if err := validatePinName(r.String("name")); err != nil {
			return nil, err
		}
		opts = append(opts, pinclient.PinOpts.FilterName(r.String("name")))
	}
	if r.IsSet("cid") {
		var cids []cid.Cid
		for _, raw := range splitList(r.Strings("cid")) {
			c, err := parseCidArg(raw)
			if err != nil {
				return nil, fmt.Errorf("CID %q cannot be parsed: %v", raw, err)
			}
			cids = append(cids, c)
		}
		opts = append(opts, pinclient.PinOpts.FilterCIDs(cids...))
	}
	var statuses []pinclient.Status
	for _, raw := range splitList(r.Strings("status")) {
		s := pinclient.Status(raw)
		if s.String() == string(pinclient.StatusUnknown) {
			return nil, fmt.Errorf("status %q is not valid", raw)
		}
		statuses = append(statuses, s)
	}
	return append(opts, pinclient.PinOpts.FilterStatus(statuses...)), nil
}

// splitList splits each value of a list option on commas (Kubo's
// delimited options).
func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		out = append(out, strings.Split(v, ",")...)
	}
	return out
}

// parseCidArg reads a CID or an /ipfs/<cid> path (Kubo's CidFromArg).
func parseCidArg(s string) (cid.Cid, error) {
	if c, err := cid.Decode(s); err == nil {
		return c, nil
	}
	p, err := node.ParsePath(s)
	if err != nil {
		return cid.Undef, err
	}
	if len(p.Segments()) > 2 {
		return cid.Undef, errors.New("path must be a CID, not a path into it")
	}
	return p.RootCid(), nil
}

// remoteLs lists the requests matching r's filters, calling fn for each.
func remoteLs(r *rpc.Request, svc *pinsvc.Client, fn func(pinclient.PinStatusGetter) error) error {
	opts, err := remoteLsOptions(r)
	if err != nil {
		return err
	}
	return svc.Ls(r.Ctx, fn, opts...)
}

func runRemotePinLs(r *rpc.Request, e rpc.Emitter) error {
	svc, err := remoteServiceFor(r)
	if err != nil {
		return err
	}
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	return remoteLs(r, svc, func(ps pinclient.PinStatusGetter) error {
		return e.Emit(toRemotePinOutput(ps, enc))
	})
}

func runRemotePinRm(r *rpc.Request, e rpc.Emitter) error {
	svc, err := remoteServiceFor(r)
	if err != nil {
		return err
	}
	var ids []string
	if err := remoteLs(r, svc, func(ps pinclient.PinStatusGetter) error {
		ids = append(ids, ps.GetRequestId())
		return nil
	}); err != nil {
		return fmt.Errorf("error while listing remote pins: %v", err)
	}
	if len(ids) > 1 && !r.Bool("force") {
		return errors.New("multiple remote pins are matching this query, add --force to confirm the bulk removal")
	}
	for _, id := range ids {
		if err := svc.Call(r.Ctx, func(ctx context.Context) error { return svc.C.DeleteByID(ctx, id) }); err != nil {
			return fmt.Errorf("removing pin identified by requestid=%q failed: %v", id, err)
		}
	}
	return nil
}

func runRemoteServiceLs(r *rpc.Request, e rpc.Emitter) error {
	svcs := r.Node.Config().Pinning.RemoteServices
	out := &PinServicesList{RemoteServices: make([]ServiceDetails, 0, len(svcs))}
	for name, svc := range svcs {
		d := ServiceDetails{Service: name, ApiEndpoint: svc.API.Endpoint}
		if r.Bool("stat") {
			// Counts are best effort: a service that does not answer
			// is "invalid" ('pin remote ls' shows why).
			d.Stat = &ServiceStat{Status: "invalid"}
			if svc, err := r.Node.RemotePins().Client(name); err == nil {
				if pc, err := svc.Count(r.Ctx); err == nil {
					d.Stat = &ServiceStat{Status: "valid", PinCount: (*PinCount)(pc)}
				}
			}
		}
		out.RemoteServices = append(out.RemoteServices, d)
	}
	sort.Slice(out.RemoteServices, func(i, j int) bool { return out.RemoteServices[i].Service < out.RemoteServices[j].Service })
	return e.Emit(out)
}

func remoteServiceLsText(t *rpc.TextEnv, v any) error {
	list := v.(*PinServicesList)
	tw := tabwriter.NewWriter(t.Out, 1, 2, 1, ' ', 0)
	for _, s := range list.RemoteServices {
		if s.Stat == nil {
			fmt.Fprintf(tw, "%s\t%s\n", s.Service, s.ApiEndpoint)
			continue
		}
		stat := s.Stat.Status
		if pc := s.Stat.PinCount; pc != nil {
			stat = fmt.Sprintf("%d/%d/%d/%d", pc.Queued, pc.Pinning, pc.Pinned, pc.Failed)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Service, s.ApiEndpoint, stat)
	}
	return tw.Flush()
}
