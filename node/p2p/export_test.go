package p2p

import "time"

// SetForgetAfter sets how long a peer that left keeps its peerstore
// records, and returns the function that puts it back.
func SetForgetAfter(d time.Duration) func() {
	old := forgetAfter
	forgetAfter = d
	return func() { forgetAfter = old }
}

// ShunStrikes is the refused records after which a peer is shunned.
const ShunStrikes = shunStrikes

// ServiceBurst is the service streams a peer may open at once;
// ServiceStrike the strikes each refused one costs it.
const (
	ServiceBurst  = serviceBurst
	ServiceStrike = serviceStrike
)

// SetProviderEvictEvery sets how often at most provider records are
// evicted past the cap, and returns the function that puts it back.
func SetProviderEvictEvery(d time.Duration) func() {
	old := providerEvictEvery
	providerEvictEvery = d
	return func() { providerEvictEvery = old }
}
