// logging.go: the one logging setup of the process. go-log (which boxo
// uses, and which reads GOLOG_LOG_LEVEL and GOLOG_LOG_FMT when it loads)
// is the only sink: slog's default logger and libp2p's gologshim loggers
// go through its slog bridge, each under its subsystem, as in Kubo 0.42's
// cmd/ipfs. `cairn log level`, `log ls` and `log tail` see them all.
// Every slog handler here is internal/slogbridge's, which logs error
// values as their text.

package main

import (
	"log/slog"

	"cairn/internal/slogbridge"

	logging "github.com/ipfs/go-log/v2"
	"github.com/libp2p/go-libp2p/gologshim"
)

// log is the daemon command's logger, named as Kubo's.
var log = logging.Logger("cmd/ipfs")

func init() {
	slog.SetDefault(slog.New(slogbridge.Handler()))
	gologshim.SetDefaultHandler(slogbridge.Handler())
}
