// logging.go: the one logging setup of the process. go-log (which boxo
// uses, and which reads GOLOG_LOG_LEVEL and GOLOG_LOG_FMT when it loads)
// is the only sink: slog's default logger and libp2p's gologshim loggers
// go through its slog bridge, each under its subsystem, as in Kubo 0.42's
// cmd/ipfs. `cairn log level`, `log ls` and `log tail` see them all.

package main

import (
	"log/slog"

	logging "github.com/ipfs/go-log/v2"
	"github.com/libp2p/go-libp2p/gologshim"
)

// log is the daemon command's logger, named as Kubo's.
var log = logging.Logger("cmd/ipfs")

func init() {
	slog.SetDefault(slog.New(logging.SlogHandler()))
	gologshim.SetDefaultHandler(logging.SlogHandler())
}

// subsystemLog is a slog logger that writes under a go-log subsystem,
// listed by `cairn log ls` (slog-only subsystems are not).
func subsystemLog(name string) *slog.Logger {
	logging.Logger(name)
	return slog.New(logging.SlogHandler()).With("logger", name)
}
