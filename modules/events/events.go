// Package events is an event bus with Prosody's rules (util.events):
// handlers have a priority (0 by default; higher runs first), the first
// handler that answers non-nil ends the firing, and adding the same
// handler (the same key) to an event again only changes its priority.
// Among equal priorities cairn runs handlers in the order they were
// added (Prosody leaves that order unspecified).
//
// The module host has two buses: the module events that module:hook and
// module:fire_event use (Prosody's prosody.events; every cairn module is
// global), and the HTTP server's events (net.http.server's), which carry
// "http-error" and "directory-index".
package events

import (
	"context"
	"sort"
	"sync"
)

// Handler answers an event; nil passes it to the next handler. ctx is
// the firer's (its deadline, and which module states the firing
// goroutine holds).
type Handler func(ctx context.Context, data any) any

// Bus holds handlers by event name. The zero value is ready to use.
type Bus struct {
	mu     sync.RWMutex
	hooks  map[string][]*entry
	sorted map[string][]*entry // cache of hooks[event] in firing order
	seq    uint64
}

type entry struct {
	owner string
	key   any
	fn    Handler
	prio  int
	seq   uint64
}

// Add hooks fn to event for owner (a module name) under key, which
// identifies the handler: adding the same key to the same event again
// replaces fn and priority, keeping one entry. key must be comparable;
// a nil key makes a new entry every time.
func (b *Bus) Add(owner, event string, key any, prio int, fn Handler) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.hooks == nil {
		b.hooks, b.sorted = map[string][]*entry{}, map[string][]*entry{}
	}
	delete(b.sorted, event)
	if key != nil {
		for i, e := range b.hooks[event] {
			if e.key == key {
				// A new entry: a Fire running now keeps the old one.
				b.hooks[event][i] = &entry{owner: owner, key: key, fn: fn, prio: prio, seq: e.seq}
				return
			}
		}
	}
	b.seq++
	b.hooks[event] = append(b.hooks[event], &entry{owner: owner, key: key, fn: fn, prio: prio, seq: b.seq})
}

// Remove unhooks the handler added under key from event; it reports
// whether there was one.
func (b *Bus) Remove(event string, key any) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	hs := b.hooks[event]
	for i, e := range hs {
		if e.key == key {
			b.hooks[event] = append(hs[:i:i], hs[i+1:]...)
			delete(b.sorted, event)
			return true
		}
	}
	return false
}

// RemoveOwner unhooks every handler of owner, from every event.
func (b *Bus) RemoveOwner(owner string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ev, hs := range b.hooks {
		kept := make([]*entry, 0, len(hs))
		for _, e := range hs {
			if e.owner != owner {
				kept = append(kept, e)
			}
		}
		if len(kept) != len(hs) {
			b.hooks[ev] = kept
			delete(b.sorted, ev)
		}
	}
}

// handlers returns event's handlers in firing order: priority
// descending, then the order they were added.
func (b *Bus) handlers(event string) []*entry {
	b.mu.RLock()
	hs, ok := b.sorted[event]
	b.mu.RUnlock()
	if ok {
		return hs
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	hs = append([]*entry(nil), b.hooks[event]...)
	sort.SliceStable(hs, func(i, j int) bool {
		if hs[i].prio != hs[j].prio {
			return hs[i].prio > hs[j].prio
		}
		return hs[i].seq < hs[j].seq
	})
	if b.sorted != nil {
		b.sorted[event] = hs
	}
	return hs
}

// Fire calls event's handlers in order until one answers non-nil, and
// returns that answer (nil when none does). Handlers added or removed
// while it runs take effect at the next Fire. A nil Bus has no handlers.
func (b *Bus) Fire(ctx context.Context, event string, data any) any {
	if b == nil {
		return nil
	}
	for _, e := range b.handlers(event) {
		if r := e.fn(ctx, data); r != nil {
			return r
		}
	}
	return nil
}

// Has reports whether event has a handler.
func (b *Bus) Has(event string) bool {
	if b == nil {
		return false
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.hooks[event]) > 0
}
