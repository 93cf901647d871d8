// shared.go: the tables of module:shared.

package modapi

import (
	"fmt"
	"math"
	"sort"
	"sync"
)

// Shared holds the tables of module:shared by path (Prosody's
// shared_data): every module that asks for a path gets the same table,
// and the tables outlive module states (a rebuild after a memory stop).
// Module states are separate, so a table lives here, in Go: its values
// are strings, numbers, booleans and tables of them. What it holds is
// capped (about MaxMemory bytes in all, counted generously).
type Shared struct {
	mu     sync.Mutex
	tables map[string]*SharedTable
	used   int64 // bytes held; an upper bound, made exact when over max
	max    int64
}

// SharedTable is one table. Keys are strings, float64 numbers or bools;
// values are strings, float64 numbers, bools or *SharedTable.
type SharedTable struct {
	m map[any]any
}

// NewSharedTable returns a table that no path holds yet (to fill before
// storing it, or as a copy of event data crossing module states).
func NewSharedTable() *SharedTable { return &SharedTable{m: map[any]any{}} }

// RawSet sets k in a table nothing else sees yet; nil deletes.
func (t *SharedTable) RawSet(k, v any) {
	if v == nil {
		delete(t.m, k)
		return
	}
	t.m[k] = v
}

// RawKeys are the keys of a table nothing else changes, in the order
// Keys gives.
func (t *SharedTable) RawKeys() []any { return sortedKeys(t.m) }

// RawGet reads a table nothing else changes.
func (t *SharedTable) RawGet(k any) any { return t.m[k] }

// NewShared returns an empty store that holds about max bytes.
func NewShared(max int64) *Shared {
	if max <= 0 {
		max = 64 << 20
	}
	return &Shared{tables: map[string]*SharedTable{}, max: max}
}

// Table returns the table at path, made empty on first use.
func (s *Shared) Table(path string) *SharedTable {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tables[path]
	if !ok {
		t = NewSharedTable()
		s.tables[path] = t
		s.used += int64(len(path)) + tableCost
	}
	return t
}

// Get returns t[k], nil when absent.
func (s *Shared) Get(t *SharedTable, k any) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return t.m[k]
}

// ErrSharedFull is returned by Set when the store is at its cap.
type ErrSharedFull struct{ Max int64 }

func (e ErrSharedFull) Error() string {
	return fmt.Sprintf("module:shared: the shared tables are full (about %d bytes, Modules.Lua.MaxMemory)", e.Max)
}

// Set stores v at t[k]; v nil deletes. A table value is stored as it is
// (a table from NewSharedTable, filled, or one already stored: then both
// places hold the same table).
func (s *Shared) Set(t *SharedTable, k, v any) error {
	if err := checkKey(k); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v == nil {
		if old, ok := t.m[k]; ok {
			delete(t.m, k)
			if _, isTable := old.(*SharedTable); !isTable {
				s.used -= entryCost(k, old)
			}
		}
		return nil
	}
	add := entryCost(k, v)
	if nt, ok := v.(*SharedTable); ok {
		add += size(nt, map[*SharedTable]bool{})
	}
	if s.used+add > s.max {
		s.used = s.exact()
		if s.used+add > s.max {
			return ErrSharedFull{s.max}
		}
	}
	if old, ok := t.m[k]; ok {
		if _, isTable := old.(*SharedTable); !isTable {
			s.used -= entryCost(k, old)
		}
	}
	t.m[k] = v
	s.used += add
	return nil
}

// Keys returns t's keys: numbers ascending, then strings, then false
// and true (Prosody leaves the order unspecified).
func (s *Shared) Keys(t *SharedTable) []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedKeys(t.m)
}

// Len is a border of t, as Lua's # operator: n with t[n] set and
// t[n+1] not (0 when t[1] is not set).
func (s *Shared) Len(t *SharedTable) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for {
		if _, ok := t.m[float64(n+1)]; !ok {
			return n
		}
		n++
	}
}

// Used is the store's size estimate in bytes, after an exact count.
func (s *Shared) Used() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used = s.exact()
	return s.used
}

func checkKey(k any) error {
	switch k := k.(type) {
	case string, bool:
		return nil
	case float64:
		if math.IsNaN(k) {
			return fmt.Errorf("module:shared: table index is NaN")
		}
		return nil
	case nil:
		return fmt.Errorf("module:shared: table index is nil")
	}
	return fmt.Errorf("module:shared: a %T cannot be a key", k)
}

const tableCost = 64

func entryCost(k, v any) int64 {
	c := int64(32)
	if s, ok := k.(string); ok {
		c += int64(len(s))
	}
	switch v := v.(type) {
	case string:
		c += int64(len(v))
	case *SharedTable:
		c += tableCost
	}
	return c
}

// size is what t and the tables under it hold, each table counted once.
func size(t *SharedTable, seen map[*SharedTable]bool) int64 {
	if seen[t] {
		return 0
	}
	seen[t] = true
	var n int64
	for k, v := range t.m {
		n += entryCost(k, v)
		if sub, ok := v.(*SharedTable); ok {
			n += size(sub, seen)
		}
	}
	return n
}

// exact counts what the paths reach; s.mu is held.
func (s *Shared) exact() int64 {
	seen := map[*SharedTable]bool{}
	var n int64
	for p, t := range s.tables {
		n += int64(len(p)) + tableCost + size(t, seen)
	}
	return n
}

func sortedKeys(m map[any]any) []any {
	keys := make([]any, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	rank := func(k any) int {
		switch k.(type) {
		case float64:
			return 0
		case string:
			return 1
		}
		return 2
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		switch a := a.(type) {
		case float64:
			return a < b.(float64)
		case string:
			return a < b.(string)
		case bool:
			return !a && b.(bool)
		}
		return false
	})
	return keys
}
