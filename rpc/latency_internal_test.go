package rpc

import (
	"math"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

func latencyRead(t *testing.T, s *latencySummary, now time.Time) (count uint64, sum float64, q map[float64]float64) {
	t.Helper()
	var m dto.Metric
	if err := s.metric(now).Write(&m); err != nil {
		t.Fatal(err)
	}
	q = map[float64]float64{}
	for _, x := range m.GetSummary().GetQuantile() {
		q[x.GetQuantile()] = x.GetValue()
	}
	return m.GetSummary().GetSampleCount(), m.GetSummary().GetSampleSum(), q
}

// Quantiles come within 1.5% of the durations of their rank; count and
// sum are exact.
func TestLatencySummary_Quantiles(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := newLatencySummary("x", "x", nil, t0)
	var sum float64
	for i := 1; i <= 1000; i++ {
		d := time.Duration(i) * time.Millisecond
		s.observe(d, t0.Add(time.Second))
		sum += d.Seconds()
	}
	count, gotSum, q := latencyRead(t, s, t0.Add(time.Minute))
	if count != 1000 || math.Abs(gotSum-sum) > 1e-9 {
		t.Errorf("count %d sum %v, want 1000 and %v", count, gotSum, sum)
	}
	for p, want := range map[float64]float64{0.5: 0.5, 0.9: 0.9, 0.99: 0.99} {
		if got := q[p]; math.Abs(got-want)/want > 0.015 {
			t.Errorf("quantile %v = %v, want %v within 1.5%%", p, got, want)
		}
	}
}

// The quantiles cover the last 8 to 10 minutes; count and sum all time.
func TestLatencySummary_Window(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := newLatencySummary("x", "x", nil, t0)
	s.observe(time.Second, t0)
	s.observe(2*time.Second, t0.Add(5*time.Minute))
	s.observe(2*time.Second, t0.Add(5*time.Minute))
	s.observe(2*time.Second, t0.Add(5*time.Minute))
	_, _, q := latencyRead(t, s, t0.Add(9*time.Minute))
	if math.Abs(q[0.5]-2)/2 > 0.015 {
		t.Errorf("at 9 min: median %v, want 2", q[0.5])
	}
	// A duration of the first step is in the window at 9 minutes and
	// gone after 10.
	s2 := newLatencySummary("x", "x", nil, t0)
	s2.observe(time.Second, t0)
	if _, _, q := latencyRead(t, s2, t0.Add(9*time.Minute)); math.Abs(q[0.5]-1)/1 > 0.015 {
		t.Errorf("at 9 min: the first step's 1 s gone: median %v", q[0.5])
	}
	if _, _, q := latencyRead(t, s2, t0.Add(10*time.Minute+time.Second)); !math.IsNaN(q[0.5]) {
		t.Errorf("at 10 min: the first step's 1 s still there: median %v", q[0.5])
	}
	count, sum, q := latencyRead(t, s, t0.Add(10*time.Minute+time.Second))
	if math.Abs(q[0.5]-2)/2 > 0.015 || count != 4 || sum != 7 {
		t.Errorf("at 10 min: median %v count %d sum %v, want 2, 4, 7", q[0.5], count, sum)
	}
	count, sum, q = latencyRead(t, s, t0.Add(time.Hour))
	if !math.IsNaN(q[0.5]) || !math.IsNaN(q[0.99]) || count != 4 || sum != 7 {
		t.Errorf("after an hour: median %v count %d sum %v, want NaN, 4, 7", q[0.5], count, sum)
	}
	s.observe(3*time.Second, t0.Add(time.Hour))
	if _, _, q := latencyRead(t, s, t0.Add(time.Hour+time.Minute)); math.Abs(q[0.5]-3)/3 > 0.015 {
		t.Errorf("after an idle hour: median %v, want 3", q[0.5])
	}
}
