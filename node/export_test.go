package node

import "time"

// SetDelegatedTimeout sets the timeout of one PUT to a delegated IPNS
// publisher for a test; the returned func restores it.
func SetDelegatedTimeout(d time.Duration) (restore func()) {
	old := delegatedTimeout
	delegatedTimeout = d
	return func() { delegatedTimeout = old }
}
