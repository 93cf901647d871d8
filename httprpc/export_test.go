package httprpc

import (
	"testing"
	"time"
)

// SetRemotePinTimeout shortens how long pin/remote waits for a service
// answer, for the test's duration.
func SetRemotePinTimeout(t testing.TB, d time.Duration) {
	old := remotePinTimeout
	remotePinTimeout = d
	t.Cleanup(func() { remotePinTimeout = old })
}

// SetRemotePinPage sets how many requests pin/remote/ls asks for at a
// time, for the test's duration.
func SetRemotePinPage(t testing.TB, n int) {
	old := remotePinPage
	remotePinPage = n
	t.Cleanup(func() { remotePinPage = old })
}
