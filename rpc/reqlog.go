// reqlog.go: the log of running and recent requests that diag/cmds
// reports, kept as Kubo's commands.ReqLog: an entry per request from its
// start to the end of its answer; inactive entries are dropped when they
// are older than the keep time (0 by default; diag/cmds/set-time), at every
// tenth change, or all at once by diag/cmds/clear.

package rpc

import (
	"maps"
	"sync"
	"time"
)

// ReqLogEntry is one request, with Kubo's field names.
type ReqLogEntry struct {
	StartTime time.Time
	EndTime   time.Time
	Active    bool
	Command   string
	Options   map[string]any
	Args      []string
	ID        int

	enc string // the request's encoding, added to Options by Report
}

// maxReqLog bounds the log: past it the oldest inactive entries go even
// when the keep time would hold them (Kubo has no bound).
const maxReqLog = 1000

// ReqLog is safe for concurrent use; the zero value is ready.
type ReqLog struct {
	mu       sync.Mutex
	requests []*ReqLogEntry
	nextID   int
	keep     time.Duration
}

// loggedArgs is args with the values of Secret arguments replaced by
// "<secret>" (a variadic last argument covers the rest).
func loggedArgs(cmd *Command, args []string) []string {
	var out []string
	for i := range args {
		j := min(i, len(cmd.Args)-1)
		if j < 0 || !cmd.Args[j].Secret {
			continue
		}
		if out == nil {
			out = append([]string{}, args...)
		}
		out[i] = "<secret>"
	}
	if out == nil {
		return args
	}
	return out
}

// loggedOptions is opts as Kubo's log shows them: with the encoding its
// HTTP layer sets on a request that names none ("json").
func loggedOptions(opts map[string]any, enc string) map[string]any {
	if _, ok := opts["encoding"]; ok {
		return opts
	}
	out := maps.Clone(opts)
	if out == nil {
		out = map[string]any{}
	}
	out["encoding"] = enc
	return out
}

// add records a request that started at start and returns its entry.
func (l *ReqLog) add(start time.Time, cmd string, opts map[string]any, enc string, args []string) *ReqLogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if args == nil {
		args = []string{}
	}
	e := &ReqLogEntry{StartTime: start, Active: true, Command: cmd, Options: opts, Args: args, ID: l.nextID, enc: enc}
	l.nextID++
	l.requests = append(l.requests, e)
	if len(l.requests) > maxReqLog {
		l.cleanup(l.keep)
		for i := 0; len(l.requests) > maxReqLog && i < len(l.requests); {
			if l.requests[i].Active {
				i++
				continue
			}
			l.requests = append(l.requests[:i], l.requests[i+1:]...)
		}
	}
	return e
}

// finish marks e inactive, ended at end.
func (l *ReqLog) finish(e *ReqLogEntry, end time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Active = false
	e.EndTime = end
	if len(l.requests)%10 == 0 {
		l.cleanup(l.keep)
	}
}

func (l *ReqLog) cleanup(keep time.Duration) {
	now := time.Now()
	kept := l.requests[:0]
	for _, e := range l.requests {
		if e.Active || e.EndTime.Add(keep).After(now) {
			kept = append(kept, e)
		}
	}
	clear(l.requests[len(kept):])
	l.requests = kept
}

// ClearInactive drops every finished request.
func (l *ReqLog) ClearInactive() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cleanup(0)
}

// SetKeepTime sets how long finished requests stay in the log.
func (l *ReqLog) SetKeepTime(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keep = d
}

// Report copies the entries, oldest first.
func (l *ReqLog) Report() []*ReqLogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*ReqLogEntry, len(l.requests))
	for i, e := range l.requests {
		c := *e
		// Here, not in add: most requests are never reported, and
		// a copy of their options cost every request.
		c.Options = loggedOptions(e.Options, e.enc)
		out[i] = &c
	}
	return out
}
