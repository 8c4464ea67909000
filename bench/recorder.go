package bench

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 µs to 5 minutes at 3 significant digits.
const (
	histMin     = 1
	histMax     = int64(5 * time.Minute / time.Microsecond)
	histSigFigs = 3
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histSigFigs) }

// record adds d to h, clamped to the histogram's range.
func record(h *hdrhistogram.Histogram, d time.Duration) {
	us := max(min(int64(d/time.Microsecond), histMax), histMin)
	_ = h.RecordValue(us) // in range by construction
}

// Latency summarises a histogram, in milliseconds.
type Latency struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p99_9_ms"`
	Max   float64 `json:"max_ms"`
}

// Summarize returns the summary of a microsecond histogram.
func Summarize(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Latency{
		Count: h.TotalCount(), Mean: h.Mean() / 1000,
		P50: ms(h.ValueAtQuantile(50)), P90: ms(h.ValueAtQuantile(90)), P99: ms(h.ValueAtQuantile(99)),
		P999: ms(h.ValueAtQuantile(99.9)), Max: ms(h.Max()),
	}
}

// OpResult is the outcome of one operation kind in a phase.
type OpResult struct {
	Count  int64 `json:"count"`
	Errors int64 `json:"errors"`
	// Latency is measured from the intended send time (open loop) or the
	// actual send (closed loop); Service always from the actual send.
	Latency Latency `json:"latency"`
	Service Latency `json:"service_time"`
	// Server is the time the server reported spending on the answers that
	// report one (a read's search_time_ms: from parsing the request to
	// rendering the answer, without encoding it or the network), nil for
	// the others.
	Server *Latency `json:"server_time,omitempty"`
}

// TimePoint is one second of a phase: requests completed in it and their
// latency percentiles (ms).
type TimePoint struct {
	Second int     `json:"t_s"`
	Count  int64   `json:"count"`
	Errors int64   `json:"errors"`
	P50    float64 `json:"p50_ms"`
	P99    float64 `json:"p99_ms"`
	Max    float64 `json:"max_ms"`
}

type opHists struct {
	latency, service *hdrhistogram.Histogram
	server           *hdrhistogram.Histogram // nil until RecordServer
	errors           int64
}

// Recorder collects the outcome of every request of a phase. It is safe for
// concurrent use.
type Recorder struct {
	mu        sync.Mutex
	start     time.Time
	ops       map[string]*opHists
	errors    map[string]int64
	tags      map[string]int64
	completed int64
	failed    int64
	sec       int                     // the second being filled
	secHist   *hdrhistogram.Histogram // latencies completed in sec
	secErrors int64
	timeline  []TimePoint
}

// NewRecorder returns a recorder of a phase that started at start.
func NewRecorder(start time.Time) *Recorder {
	return &Recorder{start: start, ops: map[string]*opHists{}, errors: map[string]int64{},
		tags: map[string]int64{}, secHist: newHist()}
}

// Record adds one completed request of kind op: intended is when it should
// have been sent, sent when it was, done when its answer (or failure)
// arrived; errKey is "" on success (see ErrorKey) and tag, when not empty,
// is counted.
func (r *Recorder) Record(op string, intended, sent, done time.Time, errKey, tag string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.op(op)
	lat := done.Sub(intended)
	record(o.latency, lat)
	record(o.service, done.Sub(sent))
	r.advance(done)
	record(r.secHist, lat)
	r.completed++
	if errKey != "" {
		o.errors++
		r.failed++
		r.secErrors++
		r.errors[errKey]++
	}
	if tag != "" {
		r.tags[tag]++
	}
}

// RecordServer adds the time the server reported for a completed request
// of kind op (recorded with Record).
func (r *Recorder) RecordServer(op string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.op(op)
	if o.server == nil {
		o.server = newHist()
	}
	record(o.server, d)
}

// op returns the histograms of op, created when missing; r.mu is held.
func (r *Recorder) op(name string) *opHists {
	o := r.ops[name]
	if o == nil {
		o = &opHists{latency: newHist(), service: newHist()}
		r.ops[name] = o
	}
	return o
}

// Advance closes every whole second before now, so that seconds in which
// nothing completed still appear in the timeline.
func (r *Recorder) Advance(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.advance(now)
}

// advance closes the seconds before the one holding now. A completion that
// belongs to an already closed second counts in the open one.
func (r *Recorder) advance(now time.Time) {
	sec := int(now.Sub(r.start) / time.Second)
	for r.sec < sec {
		r.closeSecond()
	}
}

func (r *Recorder) closeSecond() {
	h := r.secHist
	p := TimePoint{Second: r.sec, Count: h.TotalCount(), Errors: r.secErrors}
	if p.Count > 0 {
		p.P50 = float64(h.ValueAtQuantile(50)) / 1000
		p.P99 = float64(h.ValueAtQuantile(99)) / 1000
		p.Max = float64(h.Max()) / 1000
	}
	r.timeline = append(r.timeline, p)
	h.Reset()
	r.secErrors = 0
	r.sec++
}

// Flush closes the open second if anything completed in it.
func (r *Recorder) Flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.secHist.TotalCount() > 0 || r.secErrors > 0 {
		r.closeSecond()
	}
}

// Progress returns the totals so far and the last closed second.
func (r *Recorder) Progress() (completed, failed int64, last TimePoint) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.timeline); n > 0 {
		last = r.timeline[n-1]
	}
	return r.completed, r.failed, last
}

// Ops returns the result of each operation kind.
func (r *Recorder) Ops() map[string]OpResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]OpResult, len(r.ops))
	for name, o := range r.ops {
		res := OpResult{Count: o.latency.TotalCount(), Errors: o.errors,
			Latency: Summarize(o.latency), Service: Summarize(o.service)}
		if o.server != nil {
			s := Summarize(o.server)
			res.Server = &s
		}
		out[name] = res
	}
	return out
}

// Histograms returns copies of the latency and service-time histograms of
// each operation kind.
func (r *Recorder) Histograms() (latency, service map[string]*hdrhistogram.Histogram) {
	r.mu.Lock()
	defer r.mu.Unlock()
	latency, service = map[string]*hdrhistogram.Histogram{}, map[string]*hdrhistogram.Histogram{}
	for name, o := range r.ops {
		latency[name], service[name] = o.latency.Clone(), o.service.Clone()
	}
	return latency, service
}

// Errors returns the number of failed requests by ErrorKey.
func (r *Recorder) Errors() map[string]int64 { return r.copyMap(r.errors) }

// Tags returns the counts of the tags OnResponse returned.
func (r *Recorder) Tags() map[string]int64 { return r.copyMap(r.tags) }

// Timeline returns the closed seconds in order.
func (r *Recorder) Timeline() []TimePoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.timeline)
}

func (r *Recorder) copyMap(m map[string]int64) map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(m)
}
