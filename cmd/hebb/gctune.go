package main

import (
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
const (
	headroomShare = 5         // headroom = live heap / headroomShare
	minHeadroom   = 256 << 20 // bytes
	tunePeriod    = 2 * time.Second
)

// gcTuned reports whether serve tunes the collector: GOGC and GOMEMLIMIT
// unset.
func gcTuned() bool { return os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" }

// tuneGC adjusts the collector's percent to the live heap every tunePeriod
// until stop closes; it does nothing unless gcTuned.
func tuneGC(stop <-chan struct{}) {
	if !gcTuned() {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	t := time.NewTicker(tunePeriod)
	defer t.Stop()
	last := 100
	for {
		metrics.Read(sample)
		if p := gcPercent(sample[0].Value.Uint64()); p != last {
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

// gcPercent is the GOGC that gives a live heap of live bytes its headroom:
// at most Go's default of 100.
func gcPercent(live uint64) int {
	if live == 0 {
		return 100
	}
	p := max(100/headroomShare, minHeadroom*100/live)
	return int(min(100, p))
}
