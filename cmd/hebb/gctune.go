package main

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The collector's headroom. Go's default (GOGC=100) lets the heap grow to
// twice the live data between collections; a memory store's heap is
// mostly live data (atoms, postings, edges, search codes), so that default
// doubles its memory. Unless GOGC or GOMEMLIMIT is set, serve keeps the
// headroom at a fifth of the live heap, and never under minHeadroom, so a
// small server collects as Go's default does. Go's scavenger keeps about a
// tenth more than the heap's goal resident, so a large server holds some
// 1.3 times its live heap.
//
// A collection marks the whole live heap (a second or two of CPU at a
// million atoms), so under a heavy write load the headroom also holds what
// the server allocates in minCycle: at most one collection that often.
const (
	headroomShare = 5         // headroom = live heap / headroomShare
	minHeadroom   = 256 << 20 // bytes
	minCycle      = 10        // seconds of allocation the headroom holds
	tunePeriod    = 2 * time.Second
)

// gcTuned reports whether serve tunes the collector: GOGC and GOMEMLIMIT
// unset.
func gcTuned() bool { return os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" }

// tuneGC adjusts the collector's percent to the live heap and the
// allocation rate every tunePeriod until stop closes; it does nothing
// unless gcTuned.
func tuneGC(stop <-chan struct{}) {
	if !gcTuned() {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/allocs:bytes"}}
	t := time.NewTicker(tunePeriod)
	defer t.Stop()
	last, allocated, at := 100, uint64(0), time.Now()
	for {
		metrics.Read(sample)
		now, total := time.Now(), sample[1].Value.Uint64()
		rate := float64(total-allocated) / max(now.Sub(at).Seconds(), 1e-3)
		if allocated == 0 {
			rate = 0
		}
		allocated, at = total, now
		if p := gcPercent(sample[0].Value.Uint64(), uint64(rate)); p != last {
			debug.SetGCPercent(p)
			last = p
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// gcPercent is the GOGC that gives a live heap of live bytes its headroom,
// for a server allocating rate bytes a second: at most Go's default of 100.
func gcPercent(live, rate uint64) int {
	if live == 0 {
		return 100
	}
	headroom := max(live/headroomShare, minHeadroom, rate*minCycle)
	return int(min(100, max(100/headroomShare, headroom*100/live)))
}

// replayPoll is how often freeAfterReplay asks whether the groups still
// replay their logs.
const replayPoll = time.Second

// freeAfterReplay returns to the OS, once no replica replays the log it
// had on disk at start, what the replay left behind (free; nothing when
// none replays at first, or when stop ends first). Serve returns what
// restoring the snapshots left as soon as the groups are up, but a node
// stopped without a snapshot of its last writes (killed, or a crash)
// applies them after that, and the runtime hands freed memory back only
// slowly: 240k atoms, 140k of them in the log, were 1.27 GB resident when
// ready and still 15 s later.
func freeAfterReplay(stop context.Context, replaying func() int, poll time.Duration, free func()) {
	if replaying() == 0 {
		return
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-stop.Done():
			return
		case <-t.C:
		}
		if replaying() == 0 {
			free()
			return
		}
	}
}
