// config.go: the "config" commands: get and set one key, show, replace
// and profile/apply. Secrets (Identity.PrivKey, API.Authorizations,
// remote pinning keys) never leave the node and cannot be set through
// the API. Writes go through n.ConfigFile().Update.

package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"sort"
	"strings"

	"cairn/node"
	"cairn/node/config"
	"cairn/rpc"

	"github.com/ipfs/boxo/files"
	"github.com/libp2p/go-libp2p/core/peer"
)

var configCommands = []*rpc.Command{
	{
		Path:     "config",
		Synopsis: "Get and set cairn config values.",
		Help: `'cairn config' controls configuration variables. It works like 'git config'.
The configuration values are stored in a config file inside your repo.

Examples:

Get the value of the 'Routing.Type' key:

  $ cairn config Routing.Type

Set the value of the 'Routing.Type' key:

  $ cairn config Routing.Type auto

Set multiple values in the 'Addresses.AppendAnnounce' array:

  $ cairn config Addresses.AppendAnnounce --json \
      '["/dns4/a.example.com/tcp/4001", "/dns4/b.example.com/tcp/4002"]'`,
		Args: []rpc.Arg{
			{Name: "key", Kind: rpc.ArgString, Required: true, Help: `The key of the config entry (e.g. "Addresses.API").`},
			{Name: "value", Kind: rpc.ArgString, Help: "The value to set the config entry to."},
		},
		Options: []rpc.Option{
			{Names: []string{"bool"}, Type: rpc.Bool, Help: "Set a boolean value."},
			{Names: []string{"json"}, Type: rpc.Bool, Help: "Parse stringified JSON."},
			{Names: []string{"expand-auto"}, Type: rpc.Bool, Help: "Expand 'auto' placeholders to their expanded values (Ipns.DelegatedPublishers; other values are shown as stored)."},
		},
		SurplusArgs: true,
		Output:      rpc.OutSingle,
		Run:         runConfig,
		Type:        func() any { return &ConfigField{} },
		Text:        configText,
	},
	{
		Path:     "config/show",
		Synopsis: "Output config file contents.",
		Help: `NOTE: For security reasons, this command will omit your private key and remote services.
If you would like to make a full backup of your config (private key included), you must copy
the config file from your repo.`,
		Output: rpc.OutSingle,
		Run:    runConfigShow,
		Type:   func() any { m := map[string]any{}; return &m },
		Text:   configShowText,
	},
	{
		Path:     "config/replace",
		Synopsis: "Replace the config with <file>.",
		Help: `Make sure to back up the config file first if necessary, as this operation
can't be undone.`,
		Args:   []rpc.Arg{{Name: "file", Kind: rpc.ArgFile, Required: true, Help: "The file to use as the new config."}},
		Output: rpc.OutNone,
		Run:    runConfigReplace,
	},
	{
		Path:     "config/profile/apply",
		Synopsis: "Apply profile to config.",
		Help:     "Available profiles:\n" + profileHelp(),
		Args:     []rpc.Arg{{Name: "profile", Kind: rpc.ArgString, Required: true, Help: "The profile to apply to the config."}},
		Options: []rpc.Option{
			{Names: []string{"dry-run"}, Type: rpc.Bool, Help: "print difference between the current config and the config that would be generated"},
		},
		Output: rpc.OutSingle,
		Run:    runProfileApply,
		Type:   func() any { return &ConfigUpdateOutput{} },
		Text:   profileApplyText,
	},
}

// ConfigField is the body of config (get and set).
type ConfigField struct {
	Key   string
	Value any
}

// ConfigUpdateOutput is the body of config/profile/apply.
type ConfigUpdateOutput struct {
	OldCfg map[string]any
	NewCfg map[string]any
}

// Scrub selectors (Kubo's): path parts match case-insensitively, "*"
// matches any key.
var (
	privKeySelector   = []string{"Identity", "PrivKey"}
	apiAuthSelector   = []string{"API", "Authorizations"}
	pinningSelector   = []string{"Pinning", "RemoteServices", "*", "API", "Key"}
	errPrivKeyAPI     = errors.New("cannot show or change private key through API")
	errPeerIDMismatch = errors.New("cannot set Identity.PeerID to a value that does not match the node's private key; use 'ipfs key rotate' to change the node identity")
	errPinningSecret  = errors.New("cannot show or change pinning services credentials")
)

// matchesGlobPrefix compares the first min(len(key parts), len(glob))
// parts of key with glob: "*" matches anything, else case-insensitively.
func matchesGlobPrefix(key string, glob []string) bool {
	parts := strings.Split(key, ".")
	for i, g := range glob {
		if i >= len(parts) {
			break
		}
		if g != "*" && !strings.EqualFold(parts[i], g) {
			return false
		}
	}
	return true
}

func runConfig(r *rpc.Request, e rpc.Emitter) error {
	key := r.Args[0]
	switch strings.ToLower(key) {
	case "identity", "identity.privkey":
		return errPrivKeyAPI
	}
	if matchesGlobPrefix(key, pinningSelector) {
		return errPinningSecret
	}
	if len(r.Args) == 2 {
		if r.Bool("expand-auto") {
			return errors.New("--expand-auto can only be used for reading config values, not for setting them")
		}
		var value any = r.Args[1]
		switch {
		case strings.EqualFold(key, "Identity.PeerID"):
			// The peer ID follows from the private key: only the node's
			// own, in any of its forms, is taken, and stored in base58
			// (Kubo 0.43).
			candidate := r.Args[1]
			if r.Bool("json") {
				var s string
				if json.Unmarshal([]byte(candidate), &s) == nil {
					candidate = s
				}
			}
			if id, err := peer.Decode(candidate); err != nil || id != r.Node.PeerID {
				return errPeerIDMismatch
			}
			value = r.Node.PeerID.String()
		case r.Bool("json"):
			var v any
			if err := json.Unmarshal([]byte(r.Args[1]), &v); err != nil {
				return fmt.Errorf("failed to unmarshal json. %s", err)
			}
			value = v
		case r.Bool("bool"):
			value = r.Args[1] == "true"
		}
		if err := setConfigKey(r.Node, key, value); err != nil {
			return fmt.Errorf("failed to set config value: %s (maybe use --json?)", err)
		}
	}
	doc, err := r.Node.ConfigFile().Doc()
	if err != nil {
		return err
	}
	v, err := config.GetKeyExact(doc, key)
	if err != nil {
		return fmt.Errorf("failed to get config value: %q", err.Error())
	}
	if r.Bool("expand-auto") && key == "Ipns.DelegatedPublishers" {
		list := []any{}
		for _, u := range node.DelegatedPublishers(r.Node.Config()) {
			list = append(list, u)
		}
		v = list
	}
	return e.Emit(&ConfigField{Key: key, Value: v})
}

// setConfigKey sets key as Kubo does: the key must name a Config field
// (any name inside map sections), the private key survives, and the
// result must still decode as a Config.
func setConfigKey(n *node.Node, key string, value any) error {
	if err := config.CheckKey(key); err != nil {
		return err
	}
	return n.ConfigFile().Update(func(doc map[string]any) error {
		return config.SetKeyExact(doc, key, value)
	})
}

func configText(t *rpc.TextEnv, v any) error {
	if t.Req != nil && len(t.Req.Args) == 2 {
		return nil
	}
	b, err := humanJSON(v.(*ConfigField).Value)
	if err != nil {
		return err
	}
	_, err = t.Out.Write(append(b, '\n'))
	return err
}

// humanJSON is Kubo's HumanOutput: strings bare (surrounding newlines
// trimmed), anything else indented JSON.
func humanJSON(v any) ([]byte, error) {
	if s, ok := v.(string); ok {
		return []byte(strings.Trim(s, "\n")), nil
	}
	return json.MarshalIndent(v, "", "  ")
}

func runConfigShow(r *rpc.Request, e rpc.Emitter) error {
	doc, err := r.Node.ConfigFile().Doc()
	if err != nil {
		return err
	}
	doc = scrubSecrets(doc)
	return e.Emit(&doc)
}

// scrubSecrets leaves out the private key, API.Authorizations and the
// remote pinning keys (config show; profile/apply's two configs).
func scrubSecrets(doc map[string]any) map[string]any {
	doc = scrubConfig(doc, privKeySelector)
	doc = scrubConfig(doc, apiAuthSelector)
	return scrubConfig(doc, pinningSelector)
}

func configShowText(t *rpc.TextEnv, v any) error {
	b, err := humanJSON(v)
	if err != nil {
		return err
	}
	_, err = t.Out.Write(append(b, '\n'))
	return err
}

// scrubConfig returns a copy of m without what sel selects, as Kubo's
// scrubbers do: a selected map at the end of sel becomes {}, a selected
// non-map value (at the end of sel or on the way) is dropped.
func scrubConfig(m map[string]any, sel []string) map[string]any {
	if len(sel) == 0 {
		return map[string]any{}
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sel[0] != "*" && !strings.EqualFold(sel[0], k) {
			out[k] = v
			continue
		}
		if sub, ok := v.(map[string]any); ok {
			out[k] = scrubConfig(sub, sel[1:])
		}
	}
	return out
}

func runConfigReplace(r *rpc.Request, e rpc.Emitter) error {
	f, err := firstFile(r.Files)
	if err != nil {
		return err
	}
	defer f.Close()
	var fileDoc map[string]any
	if err := json.NewDecoder(f).Decode(&fileDoc); err != nil || fileDoc == nil {
		return errors.New("failed to decode file as config")
	}
	cfg, err := config.Decode(fileDoc)
	if err != nil {
		return errors.New("failed to decode file as config")
	}
	if cfg.Identity.PrivKey != "" {
		return errors.New("setting private key with API is not supported")
	}
	norm, err := config.Normalize(fileDoc)
	if err != nil {
		return errors.New("failed to decode file as config")
	}
	return r.Node.ConfigFile().Update(func(disk map[string]any) error {
		oldSvcs := remoteServices(disk)
		newSvcs := remoteServices(fileDoc)
		if len(newSvcs) != len(oldSvcs) {
			return errors.New("cannot add or remove remote pinning services with 'config replace'")
		}
		for name, old := range oldSvcs {
			svc, ok := newSvcs[name]
			if !ok {
				return errors.New("cannot add or remove remote pinning services with 'config replace'")
			}
			key, _ := config.GetKeyExact(svc, "API.Key")
			ep, _ := config.GetKeyExact(svc, "API.Endpoint")
			oldEp, _ := config.GetKeyExact(old, "API.Endpoint")
			if s, _ := key.(string); s != "" {
				return errors.New("cannot change remote pinning services api info with `config replace`")
			}
			if s, _ := ep.(string); s != "" && !reflect.DeepEqual(ep, oldEp) {
				return errors.New("cannot change remote pinning services api info with `config replace`")
			}
		}
		// Kubo merges the new config over the file, so what the new one
		// leaves out and Kubo omits when empty (API.Authorizations, the
		// private key, keys neither Kubo nor cairn knows) is kept; the
		// other keys of Kubo and cairn take the new file's values or
		// their zero values. Unknown keys of the new file are kept too.
		merged := config.MergeDocs(config.MergeDocs(disk, fileDoc), norm)
		for name, old := range oldSvcs {
			if err := config.SetKeyExact(merged, "Pinning.RemoteServices."+name+".API", old["API"]); err != nil {
				return err
			}
		}
		// The node keeps its own identity whatever PeerID the file
		// carries (one config rolled out over a fleet; Kubo 0.43).
		if err := config.SetKeyExact(merged, "Identity.PeerID", r.Node.PeerID.String()); err != nil {
			return err
		}
		clear(disk)
		maps.Copy(disk, merged)
		return nil
	})
}

// remoteServices returns Pinning.RemoteServices of doc (exact names).
func remoteServices(doc map[string]any) map[string]map[string]any {
	v, _ := config.GetKeyExact(doc, "Pinning.RemoteServices")
	m, _ := v.(map[string]any)
	out := map[string]map[string]any{}
	for name, svc := range m {
		s, _ := svc.(map[string]any)
		if s == nil {
			s = map[string]any{}
		}
		out[name] = s
	}
	return out
}

// firstFile returns the first file argument.
func firstFile(dir files.Directory) (files.File, error) {
	if dir == nil {
		return nil, errors.New("expected a file argument")
	}
	it := dir.Entries()
	if !it.Next() {
		if err := it.Err(); err != nil {
			return nil, err
		}
		return nil, errors.New("expected a file argument")
	}
	f := files.FileFromEntry(it)
	if f == nil {
		return nil, errors.New("file argument was nil")
	}
	return f, nil
}

func runProfileApply(r *rpc.Request, e rpc.Emitter) error {
	name := r.Args[0]
	if _, ok := config.Profiles[name]; !ok {
		return fmt.Errorf("%s is not a profile", name)
	}
	before, after, err := r.Node.ConfigFile().ApplyProfile(name, r.Bool("dry-run"))
	if err != nil {
		return err
	}
	return e.Emit(&ConfigUpdateOutput{
		OldCfg: scrubSecrets(before),
		NewCfg: scrubSecrets(after),
	})
}

func profileHelp() string {
	var b strings.Builder
	for _, n := range config.ProfileNames() {
		fmt.Fprintf(&b, "  '%s':\n    %s\n", n, strings.ReplaceAll(config.Profiles[n].Description, "\n", "\n    "))
	}
	return b.String()
}

// profileApplyText prints the whole old config as indented JSON with the
// changes marked in the margin, in the manner of the jsondiff output
// Kubo prints: "<>" old value, "**" new value, ">>" removed, "<<" added.
func profileApplyText(t *rpc.TextEnv, v any) error {
	out := v.(*ConfigUpdateOutput)
	var b strings.Builder
	writeDiff(&b, out.OldCfg, out.NewCfg, "")
	_, err := io.WriteString(t.Out, b.String())
	return err
}

const diffIndent = "    "

func writeDiff(b *strings.Builder, a, c map[string]any, indent string) {
	keys := make([]string, 0, len(a)+len(c))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range c {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	b.WriteString("{")
	for i, k := range keys {
		comma := ""
		if i < len(keys)-1 {
			comma = ","
		}
		b.WriteString("\n")
		av, inA := a[k]
		cv, inC := c[k]
		am, aIsMap := av.(map[string]any)
		cm, cIsMap := cv.(map[string]any)
		switch {
		case !inC:
			diffItem(b, indent+">> ", k, av, comma)
		case !inA:
			diffItem(b, indent+"<< ", k, cv, comma)
		case reflect.DeepEqual(av, cv):
			diffItem(b, indent, k, av, comma)
		case aIsMap && cIsMap:
			fmt.Fprintf(b, "%s%q: ", indent, k)
			writeDiff(b, am, cm, indent+diffIndent)
			b.WriteString(comma)
		default:
			diffItem(b, indent+"<> ", k, av, comma)
			b.WriteString("\n")
			diffItem(b, indent+"** ", k, cv, comma)
		}
	}
	fmt.Fprintf(b, "\n%s}", indent)
}

func diffItem(b *strings.Builder, prefix, key string, v any, comma string) {
	j, _ := json.Marshal(v)
	fmt.Fprintf(b, "%s%q: %s%s", prefix, key, j, comma)
}
