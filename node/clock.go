// clock.go: the node's clock, and the floor below which it is known to be
// wrong: a board without a real-time clock boots with a time years behind
// until NTP answers (or days behind, from a fake-hwclock saved long ago),
// and a record signed then would carry a validity that is already past.
// The floor is the newer of this release's date and the last time the
// node saw with its clock set, less ClockSlack.

package node

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cairn/node/config"
)

// ClockFloor is a time every clock this build runs under has passed: the
// date of this release line (raise it with each release). A time before
// it is a clock not yet set.
var ClockFloor = time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)

// ErrClockBehind is returned by what signs IPNS records (name publish,
// the republisher) while the system clock reads a time before ClockFloor.
var ErrClockBehind = errors.New("the system clock is behind")

// now is the node's time (time.Now unless a test set the clock).
func (n *Node) now() time.Time {
	if n.clock != nil {
		return n.clock()
	}
	return time.Now()
}

// ClockFile is the file in the repo that holds the last time the node
// saw with its clock set (RFC 3339, UTC): written at Close and, at most
// every clockSaveEvery, when something signs a record. Removing it lowers
// the floor to ClockFloor (for a clock that was once set wrongly ahead).
const ClockFile = "clock"

// ClockSlack is how far behind the time in ClockFile the clock may read
// and still count as set: NTP steps a clock back by seconds, not hours.
const ClockSlack = time.Hour

// clockSaveEvery bounds how often signing writes ClockFile.
const clockSaveEvery = time.Hour

// clockState is the floor the node read at open and the last time it
// saved.
type clockState struct {
	seen  time.Time // from ClockFile at open; zero when none
	saved time.Time
}

// loadClock reads ClockFile; a missing or unreadable one leaves the
// floor at ClockFloor.
func (n *Node) loadClock() {
	b, err := os.ReadFile(filepath.Join(n.Repo, ClockFile))
	if err != nil {
		return
	}
	if t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b))); err == nil {
		n.clockState.seen = t
	}
}

// saveClock writes now to ClockFile once the clock is set: at Close, and
// when something signs, at most every clockSaveEvery.
func (n *Node) saveClock(now time.Time, force bool) error {
	n.mu.Lock()
	due := force || now.Sub(n.clockState.saved) >= clockSaveEvery
	if due {
		n.clockState.saved = now
	}
	n.mu.Unlock()
	if !due {
		return nil
	}
	return config.WriteFileAtomic(filepath.Join(n.Repo, ClockFile), []byte(now.UTC().Format(time.RFC3339)+"\n"), 0o600)
}

// clockSet returns the time, or ErrClockBehind while it is before
// ClockFloor or more than ClockSlack before the last time the node saw;
// a time that passes is saved (saveClock).
func (n *Node) clockSet() (time.Time, error) {
	now := n.now()
	if err := n.checkClock(now); err != nil {
		return now, err
	}
	if err := n.saveClock(now, false); err != nil {
		log.Warnf("saving the time in %s: %v", ClockFile, err)
	}
	return now, nil
}

// checkClock is clockSet's test of now.
func (n *Node) checkClock(now time.Time) error {
	if now.Before(ClockFloor) {
		return fmt.Errorf("%w: it reads %s, before this build's release (%s); no IPNS record is signed until it is set (NTP)",
			ErrClockBehind, now.UTC().Format(time.RFC3339), ClockFloor.Format("2006-01-02"))
	}
	if seen := n.clockState.seen; now.Before(seen.Add(-ClockSlack)) {
		return fmt.Errorf("%w: it reads %s, before the time this node last saw (%s, in %s); no IPNS record is signed until it is set (NTP), or, if the clock is right and that time was wrong, until %s is removed from the repo",
			ErrClockBehind, now.UTC().Format(time.RFC3339), seen.UTC().Format(time.RFC3339), ClockFile, ClockFile)
	}
	return nil
}
