// log.go: the node's logger. Every package of cairn logs through go-log
// (as boxo and, through its slog bridge, libp2p do), one subsystem each;
// `cairn log ls` lists them and `cairn log level` sets them.

package node

import logging "github.com/ipfs/go-log/v2"

// log is the node's logger, named "core" as Kubo's node is.
var log = logging.Logger("core")
