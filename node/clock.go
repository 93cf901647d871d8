// clock.go: the node's clock, and the floor below which it is known to be
// wrong: a board without a real-time clock boots with a time years behind
// until NTP answers, and a record signed then would carry a validity that
// is already past.

package node

import (
	"errors"
	"fmt"
	"time"
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

// clockSet returns the time, or ErrClockBehind while it is before
// ClockFloor.
func (n *Node) clockSet() (time.Time, error) {
	now := n.now()
	if now.Before(ClockFloor) {
		return now, fmt.Errorf("%w: it reads %s, before this build's release (%s); no IPNS record is signed until it is set (NTP)",
			ErrClockBehind, now.UTC().Format(time.RFC3339), ClockFloor.Format("2006-01-02"))
	}
	return now, nil
}
