package node

import "time"

// SetDelegatedTimeout sets the timeout of one PUT to a delegated IPNS
// publisher for a test; the returned func restores it.
func SetDelegatedTimeout(d time.Duration) (restore func()) {
	old := delegatedTimeout
	delegatedTimeout = d
	return func() { delegatedTimeout = old }
}

// SetClock makes n read the time from now (a clock seam for tests).
func SetClock(n *Node, now func() time.Time) { n.clock = now }
