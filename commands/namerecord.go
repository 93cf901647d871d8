// namerecord.go: name get, name put and name inspect (Kubo 0.43): a
// signed IPNS record as bytes, out of and into the routing system, and
// its fields read back.

package commands

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"cairn/node"
	"cairn/rpc"

	"github.com/ipfs/boxo/ipns"
	ipnspb "github.com/ipfs/boxo/ipns/pb"
	"google.golang.org/protobuf/proto"
)

// maxIPNSRecord is the IPNS spec's limit on a record's size; maxPutRead
// is what name put reads at most (Kubo reads 1 MiB, so that --force can
// hand the routing system a record over the limit).
const (
	maxIPNSRecord = 10 << 10
	maxPutRead    = 1 << 20
)

// IpnsInspectEntry holds what name inspect could read of a record's
// fields; a field it could not read is null.
type IpnsInspectEntry struct {
	Value        string
	ValidityType *ipns.ValidityType
	Validity     *time.Time
	Sequence     *uint64
	TTL          *time.Duration
}

// IpnsInspectValidation is name inspect's answer to --verify.
type IpnsInspectValidation struct {
	Valid  bool
	Reason string
	Name   string
}

// IpnsInspectResult is the output of name inspect.
type IpnsInspectResult struct {
	Entry         IpnsInspectEntry
	PbSize        int
	SignatureType string
	HexDump       string
	Validation    *IpnsInspectValidation
}

var nameRecordCommands = []*rpc.Command{
	{
		Path:     "name/get",
		Synopsis: "Retrieve a signed IPNS record.",
		Help: `Retrieves the signed IPNS record for a given name from the routing system.

The output is the raw IPNS record (protobuf) as defined in the IPNS spec:
https://specs.ipfs.tech/ipns/ipns-record/

The record can be inspected with 'cairn name inspect':

    cairn name get <name> | cairn name inspect

This is equivalent to 'cairn routing get /ipns/<name>' but only accepts
IPNS names (not arbitrary routing keys). The node must be online; without
a DHT the record comes from the local record store.`,
		Args:        []rpc.Arg{{Name: "name", Kind: rpc.ArgString, Required: true, Help: "The IPNS name to look up."}},
		Output:      rpc.OutBytes,
		Run:         runNameGet,
		ContentType: func(*rpc.Request) string { return "application/vnd.ipfs.ipns-record" },
	},
	{
		Path:     "name/put",
		Synopsis: "Store a pre-signed IPNS record in the routing system.",
		Help: `Stores a pre-signed IPNS record in the routing system.

This command accepts a raw IPNS record (protobuf) as defined in the IPNS spec:
https://specs.ipfs.tech/ipns/ipns-record/

The record must be signed by the private key corresponding to the IPNS name.
Use 'cairn name get' to retrieve records and 'cairn name inspect' to examine.

By default the command checks that the record is a valid IPNS record of at
most 10 KiB, signed for the given name, and, on a node with a network, that
its sequence number is higher than the record the routing system has
(the same record again is allowed, to republish it). --force skips these
checks; the record store still refuses a record whose signature is wrong.

Examples:

  > cairn name get k51... > record.bin
  > cairn name put k51... record.bin`,
		Args: []rpc.Arg{
			{Name: "name", Kind: rpc.ArgString, Required: true, Help: "The IPNS name to store the record for (e.g., k51... or /ipns/k51...)."},
			{Name: "record", Kind: rpc.ArgFile, Required: true, Stdin: true, Help: "Path to file containing the signed IPNS record."},
		},
		Options: []rpc.Option{
			{Names: []string{"force", "f"}, Type: rpc.Bool, Help: "Skip validation (signature, sequence, size)."},
			{Names: []string{"allow-offline"}, Type: rpc.Bool, Help: "Store locally without broadcasting to the network."},
			{Names: []string{"allow-delegated"}, Type: rpc.Bool, Help: "Publish via HTTP delegated publishers only (no DHT)."},
			{Names: []string{"quiet", "q"}, Type: rpc.Bool, Help: "Write no output."},
		},
		Output: rpc.OutSingle,
		Run:    runNamePut,
		Type:   func() any { return &IpnsEntry{} },
		Text: func(t *rpc.TextEnv, v any) error {
			if t.Req != nil && t.Req.Bool("quiet") {
				return nil
			}
			_, err := fmt.Fprintln(t.Out, v.(*IpnsEntry).Name)
			return err
		},
	},
	{
		Path:     "name/inspect",
		Synopsis: "Inspects an IPNS Record",
		Help: `Prints values inside of IPNS Record protobuf and its DAG-CBOR Data field.

The input can be a file or STDIN, the output can be JSON:

  $ cairn routing get "/ipns/$PEERID" > ipns_record
  $ cairn name inspect --enc=json < ipns_record

Values in PublicKey, SignatureV1 and SignatureV2 fields are raw bytes encoded
in Multibase. The Data field is DAG-CBOR represented as DAG-JSON.

Passing --verify will verify signature against provided public key.`,
		Args: []rpc.Arg{{Name: "record", Kind: rpc.ArgFile, Required: true, Stdin: true, Help: "The IPNS record payload to be verified."}},
		Options: []rpc.Option{
			{Names: []string{"verify"}, Type: rpc.String, Help: "CID of the public IPNS key to validate against."},
			{Names: []string{"dump"}, Type: rpc.Bool, Default: true, Help: "Include a full hex dump of the raw Protobuf record."},
		},
		NoRepo: true,
		Output: rpc.OutSingle,
		Run:    runNameInspect,
		Type:   func() any { return &IpnsInspectResult{} },
		Text:   nameInspectText,
	},
}

// ipnsKey is the routing key of an IPNS name given as "k51..." or
// "/ipns/k51...", and the name.
func ipnsKey(arg string) (string, ipns.Name, error) {
	s := strings.TrimPrefix(arg, "/ipns/")
	name, err := ipns.NameFromString(s)
	if err != nil {
		return "", ipns.Name{}, fmt.Errorf("invalid IPNS name: %w", err)
	}
	return string(name.RoutingKey()), name, nil
}

// readRecordArg reads the record file argument, at most maxPutRead bytes
// (a record is at most 10 KiB; reading more lets the checks say what is
// wrong with a larger one, rather than reading without end).
func readRecordArg(r *rpc.Request) ([]byte, error) {
	f, err := firstFile(r.Files)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxPutRead))
}

func runNameGet(r *rpc.Request, e rpc.Emitter) error {
	if r.Node.Net == nil {
		return node.ErrOfflineAction
	}
	k, _, err := ipnsKey(r.Args[0])
	if err != nil {
		return err
	}
	rec, err := r.Node.Names().GetRecord(r.Ctx, k)
	if err != nil {
		return err
	}
	_, err = e.Write(rec)
	return err
}

func runNamePut(r *rpc.Request, e rpc.Emitter) error {
	o := node.RecordPutOptions{AllowOffline: r.Bool("allow-offline"), AllowDelegated: r.Bool("allow-delegated")}
	if o.AllowOffline && o.AllowDelegated {
		return errors.New("cannot use both --allow-offline and --allow-delegated flags")
	}
	k, name, err := ipnsKey(r.Args[0])
	if err != nil {
		return err
	}
	data, err := readRecordArg(r)
	if err != nil {
		return fmt.Errorf("failed to read record: %w", err)
	}
	if len(data) == 0 {
		return errors.New("record is empty")
	}
	if !r.Bool("force") {
		if err := checkPutRecord(r, k, name, data); err != nil {
			return err
		}
	}
	if err := r.Node.Names().PutSigned(r.Ctx, k, data, o); err != nil {
		return err
	}
	out := &IpnsEntry{Name: name.String()}
	if rec, err := ipns.UnmarshalRecord(data); err == nil {
		if v, err := rec.Value(); err == nil {
			out.Value = v.String()
		}
	}
	return e.Emit(out)
}

// checkPutRecord is name put's validation: size, signature for name,
// and a sequence above the routing system's record (online only, as
// Kubo's routing get is; offline the record store refuses an older one).
func checkPutRecord(r *rpc.Request, k string, name ipns.Name, data []byte) error {
	if len(data) > maxIPNSRecord {
		return fmt.Errorf("record exceeds maximum size of %d bytes, use --force to skip size check", maxIPNSRecord)
	}
	rec, err := ipns.UnmarshalRecord(data)
	if err != nil {
		return fmt.Errorf("invalid IPNS record: %w", err)
	}
	if err := ipns.ValidateWithName(rec, name); err != nil {
		return fmt.Errorf("record validation failed: %w", err)
	}
	if r.Node.Net == nil {
		return nil
	}
	old, err := r.Node.Names().GetRecord(r.Ctx, k)
	if err != nil || bytes.Equal(old, data) {
		return nil
	}
	oldRec, err := ipns.UnmarshalRecord(old)
	if err != nil {
		return nil
	}
	oldSeq, err1 := oldRec.Sequence()
	newSeq, err2 := rec.Sequence()
	if err1 == nil && err2 == nil && oldSeq >= newSeq {
		return fmt.Errorf("existing IPNS record has sequence %d >= new record sequence %d, use 'ipfs name put --force' to skip this check", oldSeq, newSeq)
	}
	return nil
}

func runNameInspect(r *rpc.Request, e rpc.Emitter) error {
	data, err := readRecordArg(r)
	if err != nil {
		return err
	}
	rec, err := ipns.UnmarshalRecord(data)
	if err != nil {
		return err
	}
	out := &IpnsInspectResult{}
	// Best effort: every field that reads is shown.
	if v, err := rec.Value(); err == nil {
		out.Entry.Value = v.String()
	}
	if v, err := rec.ValidityType(); err == nil {
		out.Entry.ValidityType = &v
	}
	if v, err := rec.Validity(); err == nil {
		out.Entry.Validity = &v
	}
	if v, err := rec.Sequence(); err == nil {
		out.Entry.Sequence = &v
	}
	if v, err := rec.TTL(); err == nil {
		out.Entry.TTL = &v
	}
	var pb ipnspb.IpnsRecord
	if err := proto.Unmarshal(data, &pb); err != nil {
		return err
	}
	switch {
	case len(pb.SignatureV1) != 0 || len(pb.Value) != 0:
		out.SignatureType = "V1+V2"
	case pb.Data != nil:
		out.SignatureType = "V2"
	default:
		out.SignatureType = "Unknown"
	}
	out.PbSize = proto.Size(&pb)
	if r.IsSet("verify") {
		name, err := ipns.NameFromString(r.String("verify"))
		if err != nil {
			return err
		}
		out.Validation = &IpnsInspectValidation{Name: name.String()}
		if err := ipns.ValidateWithName(rec, name); err != nil {
			out.Validation.Reason = err.Error()
		} else {
			out.Validation.Valid = true
		}
	}
	if r.Bool("dump") {
		out.HexDump = hex.Dump(data)
	}
	return e.Emit(out)
}

func nameInspectText(t *rpc.TextEnv, v any) error {
	out := v.(*IpnsInspectResult)
	w := t.Out
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	if out.Entry.Value != "" {
		fmt.Fprintf(tw, "Value:\t%q\n", out.Entry.Value)
	}
	if out.Entry.ValidityType != nil {
		fmt.Fprintf(tw, "Validity Type:\t%d\n", *out.Entry.ValidityType)
	}
	if out.Entry.Validity != nil {
		fmt.Fprintf(tw, "Validity:\t%q\n", out.Entry.Validity.Format(time.RFC3339Nano))
	}
	if out.Entry.Sequence != nil {
		fmt.Fprintf(tw, "Sequence:\t%d\n", *out.Entry.Sequence)
	}
	if out.Entry.TTL != nil {
		fmt.Fprintf(tw, "TTL:\t%s\n", out.Entry.TTL.String())
	}
	fmt.Fprintf(tw, "Protobuf Size:\t%d\n", out.PbSize)
	fmt.Fprintf(tw, "Signature Type:\t%s\n", out.SignatureType)
	tw.Flush()
	if out.Validation == nil {
		fmt.Fprintf(w, "\nThis record was not verified. Pass '--verify k51...' to verify.\n")
	} else {
		fmt.Fprintf(w, "\nValidation results:\n")
		fmt.Fprintf(tw, "\tValid:\t%v\n", out.Validation.Valid)
		if out.Validation.Reason != "" {
			fmt.Fprintf(tw, "\tReason:\t%s\n", out.Validation.Reason)
		}
		fmt.Fprintf(tw, "\tName:\t%s\n", out.Validation.Name)
		tw.Flush()
	}
	if out.HexDump != "" {
		_, err := fmt.Fprintf(w, "\nHex Dump:\n%s", out.HexDump)
		return err
	}
	return nil
}
