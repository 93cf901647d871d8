// pending.go: every command of the RPC reference (interface 0.9.0) that
// this build does not implement yet is still in the table, so that it
// answers a clear error instead of 404, and the README's command table
// can be checked against the code.

package commands

import "cairn/rpc"

// SeedCommands lists every command of the RPC reference, in its order.
var SeedCommands = []string{
	"add", "cat", "get", "ls", "file/ls", "tar/add", "tar/cat", "urlstore/add", "refs", "refs/local",
	"block/get", "block/put", "block/rm", "block/stat",
	"dag/get", "dag/put", "dag/resolve", "dag/stat", "dag/export", "dag/import",
	"cid/base32", "cid/bases", "cid/codecs", "cid/hashes", "cid/format",
	"object/data", "object/diff", "object/get", "object/links", "object/new", "object/patch/add-link",
	"object/patch/append-data", "object/patch/rm-link", "object/patch/set-data", "object/put", "object/stat",
	"files/chcid", "files/cp", "files/flush", "files/ls", "files/mkdir", "files/mv", "files/read", "files/rm",
	"files/stat", "files/write",
	"filestore/dups", "filestore/ls", "filestore/verify",
	"pin/add", "pin/ls", "pin/rm", "pin/update", "pin/verify", "pin/remote/add", "pin/remote/ls",
	"pin/remote/rm", "pin/remote/service/add", "pin/remote/service/ls", "pin/remote/service/rm",
	"key/export", "key/gen", "key/import", "key/list", "key/rename", "key/rm", "key/rotate",
	"name/publish", "name/resolve", "name/pubsub/cancel", "name/pubsub/state", "name/pubsub/subs",
	"resolve", "dns",
	"dht/findpeer", "dht/findprovs", "dht/get", "dht/provide", "dht/put", "dht/query", "stats/dht", "stats/provide",
	"bitswap/ledger", "bitswap/reprovide", "bitswap/stat", "bitswap/wantlist", "stats/bitswap",
	"bootstrap", "bootstrap/add", "bootstrap/add/default", "bootstrap/list", "bootstrap/rm", "bootstrap/rm/all",
	"swarm/addrs", "swarm/addrs/listen", "swarm/addrs/local", "swarm/connect", "swarm/disconnect",
	"swarm/filters", "swarm/filters/add", "swarm/filters/rm", "swarm/peers", "ping", "id",
	"p2p/close", "p2p/forward", "p2p/listen", "p2p/ls", "p2p/stream/close", "p2p/stream/ls",
	"pubsub/ls", "pubsub/peers", "pubsub/pub", "pubsub/sub",
	"repo/fsck", "repo/gc", "repo/stat", "stats/repo", "repo/verify", "repo/version",
	"config", "config/edit", "config/profile/apply", "config/replace", "config/show",
	"log/level", "log/ls", "log/tail", "diag/cmds", "diag/cmds/clear", "diag/cmds/set-time", "diag/sys",
	"commands", "mount", "shutdown", "stats/bw", "update", "version", "version/deps",
}

// noRemote are the commands Kubo never serves over HTTP.
var noRemote = map[string]bool{
	"key/export": true, "key/rotate": true, "config/edit": true, "repo/fsck": true, "update": true,
}

// pendingCommands returns stubs for the seed commands missing from fams.
func pendingCommands(fams [][]*rpc.Command) []*rpc.Command {
	have := map[string]bool{}
	for _, f := range fams {
		for _, c := range f {
			have[c.Path] = true
		}
	}
	var out []*rpc.Command
	for _, p := range SeedCommands {
		if have[p] {
			continue
		}
		path := p
		out = append(out, &rpc.Command{
			Path:     path,
			Synopsis: "Not implemented yet in cairn.",
			Pending:  true,
			NoRemote: noRemote[path],
			Output:   rpc.OutSingle,
			Run:      func(*rpc.Request, rpc.Emitter) error { return notImplemented(path) },
		})
	}
	return out
}
