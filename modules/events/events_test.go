package events

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

func answer(s string) Handler { return func(context.Context, any) any { return s } }

func pass(log *[]string, s string) Handler {
	return func(context.Context, any) any { *log = append(*log, s); return nil }
}

// Prosody's util.events: priority descending, first non-nil answer wins,
// the same handler added twice is one entry with the new priority.
func TestBus_PriorityFirstAnswerAndReAdd(t *testing.T) {
	var b Bus
	var log []string
	b.Add("m1", "ev", "low", -1, answer("low"))
	b.Add("m1", "ev", "zero", 0, pass(&log, "zero"))
	b.Add("m2", "ev", "high", 5, pass(&log, "high"))
	b.Add("m2", "ev", "zero2", 0, pass(&log, "zero2"))
	if got := b.Fire(context.Background(), "ev", nil); got != "low" || strings.Join(log, ",") != "high,zero,zero2" {
		t.Fatalf("fire: %v, order %v", got, log)
	}
	log = nil
	b.Add("m1", "ev", "low", 10, answer("low again")) // re-added: now first
	if got := b.Fire(context.Background(), "ev", nil); got != "low again" || len(log) != 0 {
		t.Fatalf("re-added handler: %v, %v", got, log)
	}
	if !b.Remove("ev", "low") || b.Remove("ev", "low") {
		t.Fatal("Remove should report the one entry once")
	}
	if got := b.Fire(context.Background(), "ev", nil); got != nil {
		t.Fatalf("no answer left: %v", got)
	}
	b.RemoveOwner("m2")
	log = nil
	b.Fire(context.Background(), "ev", nil)
	if strings.Join(log, ",") != "zero" || !b.Has("ev") || b.Has("other") {
		t.Fatalf("after RemoveOwner: %v", log)
	}
	var nilBus *Bus
	if nilBus.Fire(context.Background(), "ev", 1) != nil || nilBus.Has("ev") {
		t.Fatal("a nil bus has no handlers")
	}
}

// A handler may add or remove handlers while the event fires.
func TestBus_ChangesDuringFire(t *testing.T) {
	var b Bus
	n := 0
	b.Add("m", "ev", nil, 0, func(ctx context.Context, data any) any {
		n++
		b.Add("m", "ev", nil, 0, answer(fmt.Sprint("added ", n)))
		b.RemoveOwner("nobody")
		return nil
	})
	if got := b.Fire(context.Background(), "ev", nil); got != nil {
		t.Fatalf("first fire sees the handlers of its start: %v", got)
	}
	if got := b.Fire(context.Background(), "ev", nil); got != "added 1" {
		t.Fatalf("second fire: %v", got)
	}
}
