package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Generator returns the i-th request of a phase. It is called from many
// workers at once and must be safe for concurrent use.
type Generator func(i uint64) Request

// LoadConfig shapes one load phase.
type LoadConfig struct {
	// Name is the phase's name in the report and progress lines.
	Name string
	// Rate is the open-loop request rate per second; 0 runs closed loop.
	Rate float64
	// Duration is how long requests are started.
	Duration time.Duration
	// Concurrency is the number of workers, each with at most one request in
	// flight (and so the connection count).
	Concurrency int
	// Progress, when not nil, gets one line a second.
	Progress io.Writer

	clock clock // nil: the wall clock
}

// Mode names.
const (
	ModeOpen   = "open-loop"
	ModeClosed = "closed-loop"
)

// PhaseResult is the outcome of one load phase.
type PhaseResult struct {
	Name        string  `json:"name"`
	Mode        string  `json:"mode"`
	TargetRate  float64 `json:"target_rate_per_s,omitempty"`
	Concurrency int     `json:"concurrency"`
	// DurationS is the wall time from the start to the last answer.
	DurationS float64 `json:"duration_s"`
	// Scheduled is the number of open-loop slots in the duration; Missed
	// those never sent because every worker was busy (rate not sustained).
	Scheduled int64 `json:"scheduled,omitempty"`
	Missed    int64 `json:"missed"`
	Sent      int64 `json:"sent"`
	Completed int64 `json:"completed"`
	Errors    int64 `json:"errors"`
	// Throughput counts every answer per second, OKPerS the 2xx ones.
	Throughput float64 `json:"throughput_per_s"`
	// ItemsPerRequest is the batch size of batched writes (atoms per second
	// are OKPerS times it).
	ItemsPerRequest int                 `json:"items_per_request,omitempty"`
	OKPerS          float64             `json:"ok_per_s"`
	ErrorsByCode    map[string]int64    `json:"errors_by_code"`
	Tags            map[string]int64    `json:"tags,omitempty"`
	Ops             map[string]OpResult `json:"ops"`
	// ServerCPU is what the phase cost the node (nil when its /metrics
	// could not be read).
	ServerCPU *ServerCPU  `json:"server_cpu,omitempty"`
	Timeline  []TimePoint `json:"timeline"`

	rec *Recorder
}

// Recorder returns the recorder that holds the phase's histograms.
func (p *PhaseResult) Recorder() *Recorder { return p.rec }

// clock is the time source of a phase; tests substitute a simulated one.
type clock interface {
	Now() time.Time
	SleepUntil(ctx context.Context, t time.Time)
}

// wallClock is the real clock. Its SleepUntil sleeps until spin before
// the time, then yields the core until it: a goroutine woken by a timer
// runs late by the time its idle CPU takes to wake (on the 2-core VM
// ~0.7 ms at the median after 200 ms idle, in `make bench`'s open loop),
// and an open-loop send that late would charge the server for the
// harness's own wake-up.
type wallClock struct{ spin time.Duration }

// Spin budget of an open-loop phase: each send spins up to maxSpin, and
// all of them together at most spinShare of one core, so a high rate
// spins little and leaves the cores to the server.
const (
	maxSpin   = time.Millisecond
	spinShare = 0.05
)

// openLoopSpin is how long before each intended send time a phase at rate
// requests/s stops sleeping and spins.
func openLoopSpin(rate float64) time.Duration {
	if rate <= 0 {
		return 0
	}
	return min(maxSpin, time.Duration(spinShare*float64(time.Second)/rate))
}

func (wallClock) Now() time.Time { return time.Now() }

func (c wallClock) SleepUntil(ctx context.Context, t time.Time) {
	if d := time.Until(t) - c.spin; d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return
		}
	}
	for time.Now().Before(t) && ctx.Err() == nil {
		runtime.Gosched()
	}
}

// phase is one running load phase.
type phase struct {
	cfg   LoadConfig
	do    Doer
	gen   Generator
	clk   clock
	rec   *Recorder
	start time.Time
	end   time.Time
	next  atomic.Uint64 // next open-loop slot
	sent  atomic.Int64
	// interrupted: the context ended the phase before its duration (read after
	// the workers are done).
	interrupted bool
}

// RunLoad runs one phase of requests from gen through d and returns its
// result. It stops early, with what was measured, when ctx is done.
func RunLoad(ctx context.Context, d Doer, gen Generator, cfg LoadConfig) (*PhaseResult, error) {
	if cfg.Concurrency < 1 || cfg.Duration <= 0 || cfg.Rate < 0 || math.IsNaN(cfg.Rate) || math.IsInf(cfg.Rate, 0) {
		return nil, fmt.Errorf("%w: phase %q needs concurrency >= 1, duration > 0 and a finite rate >= 0",
			ErrBadConfig, cfg.Name)
	}
	p := &phase{cfg: cfg, do: d, gen: gen, clk: cfg.clock}
	if p.clk == nil {
		p.clk = wallClock{spin: openLoopSpin(cfg.Rate)}
	}
	p.start = p.clk.Now()
	p.end = p.start.Add(cfg.Duration)
	p.rec = NewRecorder(p.start)
	stop := p.progress()
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Go(func() {
			if cfg.Rate > 0 {
				p.openWorker(ctx)
			} else {
				p.closedWorker(ctx)
			}
		})
	}
	wg.Wait()
	stop()
	p.interrupted = ctx.Err() != nil
	return p.result(), nil
}

// slot returns the intended send time of open-loop request i.
func (p *phase) slot(i uint64) time.Time {
	return p.start.Add(time.Duration(float64(i) * float64(time.Second) / p.cfg.Rate))
}

// openWorker claims slots in order, waits for each one's intended time and
// sends; when it is late it sends at once, and the lateness counts.
func (p *phase) openWorker(ctx context.Context) {
	for ctx.Err() == nil {
		i := p.next.Add(1) - 1
		intended := p.slot(i)
		if !intended.Before(p.end) {
			return
		}
		p.clk.SleepUntil(ctx, intended)
		if ctx.Err() != nil || !p.clk.Now().Before(p.end) {
			return
		}
		p.send(i, intended)
	}
}

// closedWorker sends back to back until the duration ends.
func (p *phase) closedWorker(ctx context.Context) {
	for ctx.Err() == nil {
		now := p.clk.Now()
		if !now.Before(p.end) {
			return
		}
		p.send(p.next.Add(1)-1, now)
	}
}

func (p *phase) send(i uint64, intended time.Time) {
	req := p.gen(i)
	var a answer
	a.hook(&req)
	sent := p.clk.Now()
	p.sent.Add(1)
	status, err := p.do.Do(&req)
	done := p.clk.Now()
	p.rec.Record(req.Op, intended, sent, done, ErrorKey(status, err), a.tag)
	if a.timed {
		p.rec.RecordServer(req.Op, a.server)
	}
}

// answer is what a request's OnResponse and ServerTime made of its answer.
type answer struct {
	tag    string
	server time.Duration
	timed  bool // server holds the time the server reported
}

// hook makes req's answer land in a.
func (a *answer) hook(req *Request) {
	f, st := req.OnResponse, req.ServerTime
	if f == nil && st == nil {
		return
	}
	req.OnResponse = func(status int, body []byte) string {
		if st != nil && status >= 200 && status < 300 {
			a.server, a.timed = st(body)
		}
		if f != nil {
			a.tag = f(status, body)
		}
		return a.tag
	}
}

// progress prints a line a second until the returned stop is called.
func (p *phase) progress() (stop func()) {
	if p.cfg.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.rec.Advance(p.clk.Now())
				p.printProgress()
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (p *phase) printProgress() {
	completed, failed, last := p.rec.Progress()
	el := p.clk.Now().Sub(p.start).Seconds()
	fmt.Fprintf(p.cfg.Progress, "%-8s %5.0fs  sent %-7d done %-7d err %-5d | last 1s: %5d req  p50 %7.2fms  p99 %7.2fms  max %7.2fms\n",
		p.cfg.Name, el, p.sent.Load(), completed, failed, last.Count, last.P50, last.P99, last.Max)
}

func (p *phase) result() *PhaseResult {
	p.rec.Flush()
	completed, failed, _ := p.rec.Progress()
	r := &PhaseResult{
		Name: p.cfg.Name, Mode: ModeClosed, Concurrency: p.cfg.Concurrency,
		Sent: p.sent.Load(), Completed: completed, Errors: failed,
		ErrorsByCode: p.rec.Errors(), Tags: p.rec.Tags(), Ops: p.rec.Ops(), Timeline: p.rec.Timeline(), rec: p.rec,
	}
	now := p.clk.Now()
	el := max(now.Sub(p.start).Seconds(), 1e-9)
	if p.cfg.Rate > 0 {
		r.Mode, r.TargetRate = ModeOpen, p.cfg.Rate
		// The slots due: the whole --duration, or up to an interruption.
		// Throughput is over that time at least: the last answer can come
		// up to a slot before the end (at 0.5/s, 2 s early: the rate read
		// twice the target).
		due := p.end
		if p.interrupted && now.Before(due) {
			due = now
		}
		ran := due.Sub(p.start).Seconds()
		r.Scheduled = int64(math.Ceil(ran * p.cfg.Rate))
		r.Missed = max(r.Scheduled-r.Sent, 0)
		el = max(el, ran)
	}
	r.DurationS = el
	r.Throughput = float64(completed) / el
	r.OKPerS = float64(completed-failed) / el
	return r
}
