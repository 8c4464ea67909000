package bench

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"
)

// simClock is a simulated clock: sleeping jumps to the wake-up time.
type simClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *simClock) SleepUntil(_ context.Context, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
}

func (c *simClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// slowServer answers every call after a fixed service time of simulated
// time; every failEvery-th call (when > 0) gets a 503.
type slowServer struct {
	clk       *simClock
	service   time.Duration
	failEvery int
	calls     int
	body      []byte // the answer's body; {} when nil
}

func (s *slowServer) Do(req *Request) (int, error) {
	s.calls++
	s.clk.advance(s.service)
	status := 200
	if s.failEvery > 0 && s.calls%s.failEvery == 0 {
		status = 503
	}
	if req.OnResponse != nil {
		body := s.body
		if body == nil {
			body = []byte(`{}`)
		}
		req.OnResponse(status, body)
	}
	return status, nil
}

func near(got, want float64) bool { return math.Abs(got-want) <= 0.002*want+0.01 }

// TestCoordinatedOmission runs one worker against a server slower than the
// schedule: each request waits for the previous one, so its latency from the
// intended send time grows by (service - interval) per request while its
// service time stays flat. An uncorrected generator would report 100 ms
// throughout.
func TestCoordinatedOmission(t *testing.T) {
	tests := []struct {
		name        string
		rate        float64
		service     time.Duration
		sent        int64
		missed      int64
		latP50      float64 // ms
		latMax      float64
		latMean     float64
		serviceMax  float64
		timelineLen int
		throughput  float64 // per s, over the whole --duration
	}{
		// Slots every 10 ms, 100 ms each: sends at 0, 100, ..., 900 ms;
		// request k is intended at 10k ms and done at 100(k+1) ms.
		{name: "overloaded", rate: 100, service: 100 * time.Millisecond, sent: 10, missed: 90,
			latP50: 100 + 90*4, latMax: 100 + 90*9, latMean: 100 + 90*4.5, serviceMax: 100, timelineLen: 2, throughput: 10},
		// Slots every 200 ms, 100 ms each: never late. The last answer
		// comes at 900 ms; the rate is over the second (5/s, not 5.56).
		{name: "keeps up", rate: 5, service: 100 * time.Millisecond, sent: 5, missed: 0,
			latP50: 100, latMax: 100, latMean: 100, serviceMax: 100, timelineLen: 1, throughput: 5},
		// Closed loop: latency is service time.
		{name: "closed loop", rate: 0, service: 100 * time.Millisecond, sent: 10, missed: 0,
			latP50: 100, latMax: 100, latMean: 100, serviceMax: 100, timelineLen: 2, throughput: 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := &simClock{now: time.Unix(1_700_000_000, 0)}
			srv := &slowServer{clk: clk, service: tc.service}
			gen := func(uint64) Request { return Request{Op: "op", Method: "POST", Path: "/x"} }
			res, err := RunLoad(context.Background(), srv, gen,
				LoadConfig{Name: tc.name, Rate: tc.rate, Duration: time.Second, Concurrency: 1, clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			if res.Sent != tc.sent || res.Completed != tc.sent || res.Missed != tc.missed {
				t.Errorf("sent %d completed %d missed %d, want %d, %d, %d",
					res.Sent, res.Completed, res.Missed, tc.sent, tc.sent, tc.missed)
			}
			op := res.Ops["op"]
			for _, c := range []struct {
				what      string
				got, want float64
			}{
				{"latency p50", op.Latency.P50, tc.latP50},
				{"latency max", op.Latency.Max, tc.latMax},
				{"latency mean", op.Latency.Mean, tc.latMean},
				{"service p50", op.Service.P50, 100},
				{"service max", op.Service.Max, tc.serviceMax},
			} {
				if !near(c.got, c.want) {
					t.Errorf("%s = %.3f ms, want %.3f", c.what, c.got, c.want)
				}
			}
			if !near(res.Throughput, tc.throughput) {
				t.Errorf("throughput %.3f/s, want %.3f", res.Throughput, tc.throughput)
			}
			if len(res.Timeline) != tc.timelineLen {
				t.Errorf("timeline has %d seconds, want %d: %+v", len(res.Timeline), tc.timelineLen, res.Timeline)
			}
			var n int64
			for _, p := range res.Timeline {
				n += p.Count
			}
			if n != res.Completed {
				t.Errorf("timeline counts %d requests, want %d", n, res.Completed)
			}
		})
	}
}

func TestRunLoadCountsErrorsAndTags(t *testing.T) {
	clk := &simClock{now: time.Unix(1_700_000_000, 0)}
	srv := &slowServer{clk: clk, service: 10 * time.Millisecond, failEvery: 4}
	gen := func(i uint64) Request {
		return Request{Op: "op", OnResponse: func(status int, _ []byte) string {
			if status == 200 && i%2 == 0 {
				return "even"
			}
			return ""
		}}
	}
	res, err := RunLoad(context.Background(), srv, gen,
		LoadConfig{Name: "errors", Rate: 50, Duration: time.Second, Concurrency: 1, clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	// 50 slots 20 ms apart, 10 ms each: all sent; calls 4, 8, ... fail.
	if res.Sent != 50 || res.Errors != 12 || res.ErrorsByCode["503"] != 12 || res.Ops["op"].Errors != 12 {
		t.Errorf("sent %d errors %d by code %v op errors %d, want 50, 12, 503:12, 12",
			res.Sent, res.Errors, res.ErrorsByCode, res.Ops["op"].Errors)
	}
	// Even slots that did not fail: 25 even, of which calls 4, 8, ... (slot
	// 3, 7, ...) are odd, so none of the failures is even.
	if res.Tags["even"] != 25 {
		t.Errorf("tag even = %d, want 25", res.Tags["even"])
	}
	// Over the whole second (the last answer arrives at 990 ms).
	if want := 38.0; !near(res.OKPerS, want) {
		t.Errorf("ok/s = %.2f, want %.2f", res.OKPerS, want)
	}
}

func TestRunLoadRejectsBadConfig(t *testing.T) {
	gen := func(uint64) Request { return Request{} }
	for name, cfg := range map[string]LoadConfig{
		"no workers":    {Duration: time.Second},
		"no duration":   {Concurrency: 1},
		"negative rate": {Concurrency: 1, Duration: time.Second, Rate: -1},
		"NaN rate":      {Concurrency: 1, Duration: time.Second, Rate: math.NaN()},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := RunLoad(context.Background(), nil, gen, cfg); !errors.Is(err, ErrBadConfig) {
				t.Errorf("err = %v, want ErrBadConfig", err)
			}
		})
	}
}

// TestWallClockSleepUntil: the wall clock never wakes before the time,
// spinning or not, and a done context ends the wait at once.
func TestWallClockSleepUntil(t *testing.T) {
	for _, spin := range []time.Duration{0, openLoopSpin(5), 50 * time.Millisecond} {
		c := wallClock{spin: spin}
		for _, d := range []time.Duration{-time.Millisecond, 0, 300 * time.Microsecond, 3 * time.Millisecond} {
			until := time.Now().Add(d)
			c.SleepUntil(context.Background(), until)
			if now := time.Now(); now.Before(until) {
				t.Fatalf("spin %v: woke %v before the time", spin, until.Sub(now))
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(10*time.Millisecond, cancel)
		done := make(chan struct{})
		go func() {
			c.SleepUntil(ctx, time.Now().Add(time.Hour))
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("spin %v: a cancelled sleep did not return", spin)
		}
	}
}

// TestOpenLoopSpin: each send spins at most a millisecond, and a phase's
// sends together at most 5% of a core.
func TestOpenLoopSpin(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		want time.Duration
	}{{0, 0}, {5, time.Millisecond}, {50, time.Millisecond}, {100, 500 * time.Microsecond}, {10000, 5 * time.Microsecond}} {
		if got := openLoopSpin(tc.rate); got != tc.want {
			t.Errorf("openLoopSpin(%v) = %v, want %v", tc.rate, got, tc.want)
		}
	}
}
