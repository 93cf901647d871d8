// bwhistory.go: the traffic of the last hour, minute by minute, for the
// status app's chart.

package p2p

import (
	"sync"
	"time"
)

// BWSample is the traffic of one minute.
type BWSample struct {
	Time     time.Time
	BytesIn  int64
	BytesOut int64
}

type bwHistory struct {
	mu      sync.Mutex
	samples []BWSample // oldest first, at most 60
	in, out int64      // totals at the last sample
}

// sampleBW records one minute of traffic every minute until the network
// stops.
func (nt *Net) sampleBW() {
	defer nt.wg.Done()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	h := &nt.bwHist
	tot := nt.BW.GetBandwidthTotals()
	h.mu.Lock()
	h.in, h.out = tot.TotalIn, tot.TotalOut
	h.mu.Unlock()
	for {
		select {
		case <-nt.ctx.Done():
			return
		case now := <-t.C:
			tot := nt.BW.GetBandwidthTotals()
			h.mu.Lock()
			h.samples = append(h.samples, BWSample{Time: now, BytesIn: tot.TotalIn - h.in, BytesOut: tot.TotalOut - h.out})
			if len(h.samples) > 60 {
				h.samples = h.samples[len(h.samples)-60:]
			}
			h.in, h.out = tot.TotalIn, tot.TotalOut
			h.mu.Unlock()
		}
	}
}

// BandwidthHistory returns up to 60 one-minute samples, oldest first.
func (nt *Net) BandwidthHistory() []BWSample {
	h := &nt.bwHist
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]BWSample(nil), h.samples...)
}
