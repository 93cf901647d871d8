package node_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cairn/internal/testutil"
	"cairn/node"
)

// Ensure that with a clock years behind (a board without a real-time
// clock, before NTP answers) name publish refuses with a clear error and
// the republisher signs nothing, and that once the clock jumps forward
// both work, the record valid for its lifetime from the real time.
func TestNames_ClockBehind_NoRecordUntilSet(t *testing.T) {
	n := testutil.MustOpenNode(t)
	ctx := context.Background()
	real := time.Now()
	behind := time.Date(2019, 3, 1, 0, 0, 0, 0, time.UTC)
	var now time.Time
	node.SetClock(n, func() time.Time { return now })
	o := node.PublishOptions{Lifetime: 48 * time.Hour, AllowOffline: true}
	p := mustPath(t, "/ipfs/bafkqaaa")

	now = real
	if _, err := n.Names().Publish(ctx, p, o); err != nil {
		t.Fatalf("publish with the clock right: %v", err)
	}
	now = behind
	_, err := n.Names().Publish(ctx, mustPath(t, "/ipfs/bafkqaalb"), o)
	if !errors.Is(err, node.ErrClockBehind) || !strings.Contains(err.Error(), "2019-03-01") {
		t.Fatalf("publish with the clock behind: %v, want ErrClockBehind naming the time", err)
	}
	done, failed := n.Names().Republish(ctx)
	if done != 0 || failed != 1 {
		t.Fatalf("republish with the clock behind: %d done, %d failed; want 0, 1", done, failed)
	}
	rec := testutil.LocalRecord(t, n)
	if v, _ := rec.Validity(); v.Before(real.Add(47 * time.Hour)) {
		t.Fatalf("the record's validity went back to %s", v)
	}

	now = real.Add(time.Hour) // NTP answered
	if done, failed := n.Names().Republish(ctx); done != 1 || failed != 0 {
		t.Fatalf("republish once the clock is set: %d done, %d failed", done, failed)
	}
	if _, err := n.Names().Publish(ctx, mustPath(t, "/ipfs/bafkqaalb"), o); err != nil {
		t.Fatalf("publish once the clock is set: %v", err)
	}
	v, _ := testutil.LocalRecord(t, n).Validity()
	if want := real.Add(49 * time.Hour); v.Before(want.Add(-time.Minute)) || v.After(want.Add(time.Minute)) {
		t.Fatalf("record valid until %s, want about %s", v, want)
	}
}

// Ensure the node keeps the last time it saw with its clock set, so that
// after a restart a clock days behind that time (past ClockFloor: a
// fake-hwclock saved long ago) signs nothing until it is set, and that
// removing ClockFile lowers the floor again.
func TestNames_ClockBehindLastSeen_NoRecordUntilSet(t *testing.T) {
	repo := testutil.MustInitRepo(t)
	seen := time.Now().Add(30 * 24 * time.Hour) // a month past now
	var now time.Time
	open := func() *node.Node {
		n, err := node.New(repo, nil)
		if err != nil {
			t.Fatal(err)
		}
		node.SetClock(n, func() time.Time { return now })
		return n
	}
	o := node.PublishOptions{Lifetime: 48 * time.Hour, AllowOffline: true}
	ctx := context.Background()

	now = seen
	n := open()
	if _, err := n.Names().Publish(ctx, mustPath(t, "/ipfs/bafkqaaa"), o); err != nil {
		t.Fatalf("publish with the clock right: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	now = seen.Add(-5 * 24 * time.Hour) // days behind, past ClockFloor
	n = open()
	_, err := n.Names().Publish(ctx, mustPath(t, "/ipfs/bafkqaalb"), o)
	if !errors.Is(err, node.ErrClockBehind) || !strings.Contains(err.Error(), seen.UTC().Format("2006-01-02")) {
		t.Fatalf("publish with the clock days behind the last seen time: %v, want ErrClockBehind naming that time", err)
	}
	if done, failed := n.Names().Republish(ctx); done != 0 || failed != 1 {
		t.Fatalf("republish with the clock days behind: %d done, %d failed; want 0, 1", done, failed)
	}
	now = seen.Add(-node.ClockSlack / 2) // NTP stepped it back a little
	if _, err := n.Names().Publish(ctx, mustPath(t, "/ipfs/bafkqaalb"), o); err != nil {
		t.Fatalf("publish with the clock within ClockSlack of the last seen time: %v", err)
	}
	now = seen.Add(-5 * 24 * time.Hour)
	if err := n.Close(); err != nil { // the clock is behind: the file keeps its time
		t.Fatal(err)
	}

	n = open()
	if _, err := n.Names().Publish(ctx, mustPath(t, "/ipfs/bafkqaalb"), o); !errors.Is(err, node.ErrClockBehind) {
		t.Fatalf("publish after a restart with the clock still behind: %v, want ErrClockBehind", err)
	}
	n.Close()
	if err := os.Remove(filepath.Join(repo, node.ClockFile)); err != nil {
		t.Fatal(err)
	}
	n = open()
	defer n.Close()
	// namesys still refuses to replace the stored record, valid longer
	// than one made days behind, but the clock no longer stops it.
	if _, err := n.Names().Publish(ctx, mustPath(t, "/ipfs/bafkqaalb"), o); errors.Is(err, node.ErrClockBehind) {
		t.Fatalf("publish once %s is removed: %v, want the clock no longer behind", node.ClockFile, err)
	}
}
