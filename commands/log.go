// log.go: the "log" family: log/level, log/ls, log/tail, as Kubo 0.42's
// core/commands/log.go. Every logger of the process is go-log's (cairn's
// own, boxo's, and libp2p's through the slog bridge the daemon installs,
// see cmd/cairn/logging.go), so these commands see them all.

package commands

import (
	"bufio"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"

	"cairn/rpc"

	logging "github.com/ipfs/go-log/v2"
)

// log is the logger of the command families, named as Kubo's.
var log = logging.Logger("core/commands")

const (
	allLogSubsystems      = "*"
	allLogSubsystemsAlias = "all"
	defaultLogLevel       = "default"
	defaultSubsystemKey   = "(default)"
)

// LogLevelOutput is the answer of log/level: the levels asked for, or the
// message of a change.
type LogLevelOutput struct {
	Levels  map[string]string `json:",omitempty"`
	Message string            `json:",omitempty"`
}

var logCommands = []*rpc.Command{{
	Path:     "log/level",
	Synopsis: "Change or get the logging level.",
	Help: `Get or change the logging level of one or all logging subsystems.

  cairn log level              # the default level of subsystems not set
  cairn log level all          # every subsystem's level
  cairn log level core         # the level of 'core'
  cairn log level core debug   # set 'core' to debug (the default is unchanged)
  cairn log level all info     # set every subsystem and the default to info
  cairn log level core default # set 'core' back to the current default

'all' and '*' name every subsystem including the default. Levels: debug,
info, warn, error, dpanic, panic, fatal. GOLOG_LOG_LEVEL (e.g.
"error,bitswap=debug") and GOLOG_LOG_FMT (color, nocolor, json) set them
at start.`,
	Args: []rpc.Arg{
		{Name: "subsystem", Kind: rpc.ArgString, Help: "The subsystem logging identifier. Use 'all' or '*' to get or set the log level of all subsystems including the default. If not specified, only show the default log level."},
		{Name: "level", Kind: rpc.ArgString, Help: "The log level, with 'debug' as the most verbose and 'fatal' the least verbose. Use 'default' to set to the current default level. One of: debug, info, warn, error, dpanic, panic, fatal, default"},
	},
	NoLocal: true,
	Output:  rpc.OutSingle,
	Run:     runLogLevel,
	Type:    func() any { return &LogLevelOutput{} },
	Text:    logLevelText,
}, {
	Path:     "log/ls",
	Synopsis: "List the logging subsystems.",
	Help:     "'cairn log ls' lists the logging subsystems of a running daemon.",
	Output:   rpc.OutSingle,
	Run: func(r *rpc.Request, e rpc.Emitter) error {
		subs := logging.GetSubsystems()
		sort.Strings(subs)
		return e.Emit(&StringsOutput{Strings: subs})
	},
	Type: func() any { return &StringsOutput{} },
	Text: stringsText,
}, {
	Path:     "log/tail",
	Synopsis: "Read and output log messages.",
	Help: `Outputs log messages as they are generated, one JSON object a line.

NOTE: --log-level requires the server to be logging at least at this level

  GOLOG_LOG_LEVEL="error,bitswap=debug" cairn daemon
  cairn log tail --log-level info

This will only return 'info' logs from bitswap and skip 'debug'.

A reader that falls more than 1024 messages (or 1 MiB) behind is dropped:
it gets what was queued, then the stream ends with an error saying so.`,
	Options: []rpc.Option{{Names: []string{"log-level"}, Type: rpc.String, Default: "", Help: "Log level to listen to."}},
	Output:  rpc.OutBytes,
	Run:     runLogTail,
}}

func runLogLevel(r *rpc.Request, e rpc.Emitter) error {
	var subsystem, level string
	if len(r.Args) > 0 {
		subsystem = r.Args[0]
		if len(r.Args) > 1 {
			level = r.Args[1]
		}
		if subsystem == allLogSubsystemsAlias {
			subsystem = allLogSubsystems
		}
	}
	if level != "" {
		if level == defaultLogLevel {
			level = logging.DefaultLevel().String()
		}
		if err := logging.SetLogLevel(subsystem, level); err != nil {
			return err
		}
		msg := fmt.Sprintf("Changed log level of '%s' to '%s'\n", subsystem, level)
		log.Info(msg)
		return e.Emit(&LogLevelOutput{Message: msg})
	}
	switch subsystem {
	case "":
		return e.Emit(&LogLevelOutput{Levels: map[string]string{logging.DefaultName: logging.DefaultLevel().String()}})
	case allLogSubsystems:
		levels := logging.SubsystemLevelNames()
		levels[defaultSubsystemKey] = levels[logging.DefaultName]
		delete(levels, logging.DefaultName)
		return e.Emit(&LogLevelOutput{Levels: levels})
	}
	lvl, err := logging.SubsystemLevelName(subsystem)
	if err != nil {
		return err
	}
	return e.Emit(&LogLevelOutput{Levels: map[string]string{subsystem: lvl}})
}

// logLevelText prints the message of a change, or "name: level" lines
// (the level alone when the CLI asked for one subsystem), as Kubo's CLI.
func logLevelText(t *rpc.TextEnv, v any) error {
	out := v.(*LogLevelOutput)
	if out.Message != "" {
		_, err := fmt.Fprint(t.Out, out.Message)
		return err
	}
	lines := make([]string, 0, len(out.Levels))
	for sub, lvl := range out.Levels {
		if len(out.Levels) > 1 {
			lines = append(lines, sub+": "+lvl)
		} else {
			lines = append(lines, lvl)
		}
	}
	slices.Sort(lines)
	for _, l := range lines {
		if _, err := fmt.Fprintln(t.Out, l); err != nil {
			return err
		}
	}
	return nil
}

// A log/tail reader may be tailQueue lines or tailBytes bytes behind; past
// either it is dropped. maxTailLine caps one line (longer ones are cut).
const (
	tailQueue   = 1024
	tailBytes   = 1 << 20
	maxTailLine = 64 << 10
)

// errTailDropped ends the stream of a reader that fell behind.
var errTailDropped = fmt.Errorf("log tail: the reader fell behind (%d messages or %d KiB queued) and was dropped", tailQueue, tailBytes>>10)

func runLogTail(r *rpc.Request, e rpc.Emitter) error {
	var opts []logging.PipeReaderOption
	if s := r.String("log-level"); s != "" {
		lvl, err := logging.Parse(s)
		if err != nil {
			return fmt.Errorf("setting log level %s: %w", s, err)
		}
		opts = append(opts, logging.PipeLevel(lvl))
	}
	t := startTail(logging.NewPipeReader(opts...))
	defer t.stop()
	// The headers go out at once, not with the first message.
	if _, err := e.Write(nil); err != nil {
		return err
	}
	if err := flush(e); err != nil {
		return err
	}
	for {
		select {
		case <-r.Ctx.Done():
			return nil
		case line, ok := <-t.lines:
			if !ok {
				return errTailDropped
			}
			t.queued.Add(-int64(len(line)))
			if _, err := e.Write(line); err != nil {
				return err
			}
			if err := flush(e); err != nil {
				return err
			}
		}
	}
}

// tail moves log lines from go-log's pipe, which blocks the logging
// goroutine until it is read, into a bounded queue: the pump never waits
// for the client. When the queue is full the reader is dropped (lines is
// closed once the queued lines are read) and the pump reads on,
// discarding, until the pipe is closed.
type tail struct {
	pipe   *logging.PipeReader
	lines  chan []byte
	queued atomic.Int64 // bytes in lines
	done   chan struct{}
}

func startTail(p *logging.PipeReader) *tail {
	t := &tail{pipe: p, lines: make(chan []byte, tailQueue), done: make(chan struct{})}
	go t.pump()
	return t
}

func (t *tail) pump() {
	defer close(t.done)
	br := bufio.NewReaderSize(t.pipe, 4<<10)
	dropped := false
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) <= maxTailLine {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if !dropped {
				close(t.lines)
			}
			return
		}
		if !dropped {
			dropped = !t.offer(line)
			if dropped {
				close(t.lines)
				go t.pipe.Close()
			}
		}
		line = nil
	}
}

// offer queues a line unless the reader is too far behind.
func (t *tail) offer(line []byte) bool {
	if t.queued.Load()+int64(len(line)) > tailBytes {
		return false
	}
	select {
	case t.lines <- line:
		t.queued.Add(int64(len(line)))
		return true
	default:
		return false
	}
}

// stop unregisters the pipe and waits for the pump.
func (t *tail) stop() {
	_ = t.pipe.Close()
	<-t.done
}

// flusher is the emitter of a stream that can push what was written to
// the client at once (the HTTP one).
type flusher interface{ Flush() error }

func flush(e rpc.Emitter) error {
	if f, ok := e.(flusher); ok {
		return f.Flush()
	}
	return nil
}
