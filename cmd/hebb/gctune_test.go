package main

import (
	"context"
	"testing"
	"time"
)

func TestGCPercent(t *testing.T) {
	for _, c := range []struct {
		live, rate uint64
		want       int
	}{
		{0, 0, 100},
		{100 << 20, 0, 100}, // small: Go's default
		{512 << 20, 0, 50},  // the minimum headroom
		{1 << 30, 0, 25},
		{2 << 30, 0, 20}, // a fifth
		{4 << 30, 1 << 20, 20},
		{2 << 30, 100 << 20, 48}, // writing: ten seconds of allocation
		{2 << 30, 1 << 30, 100},  // never more than Go's default
	} {
		if got := gcPercent(c.live, c.rate); got != c.want {
			t.Errorf("gcPercent(%d MiB, %d MiB/s) = %d, want %d", c.live>>20, c.rate>>20, got, c.want)
		}
	}
}

// TestFreeAfterReplay: memory is returned once, when the last replica has
// replayed its log; never when none replays at start or the stop comes
// first.
func TestFreeAfterReplay(t *testing.T) {
	run := func(stop context.Context, counts ...int) int {
		freed, asked := 0, 0
		replaying := func() int {
			n := counts[min(asked, len(counts)-1)]
			asked++
			return n
		}
		freeAfterReplay(stop, replaying, time.Millisecond, func() { freed++ })
		return freed
	}
	if n := run(context.Background(), 2, 2, 1, 0); n != 1 {
		t.Errorf("replay ending: freed %d times, want 1", n)
	}
	if n := run(context.Background(), 0); n != 0 {
		t.Errorf("nothing to replay: freed %d times, want 0", n)
	}
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	if n := run(stopped, 1); n != 0 {
		t.Errorf("stopped while replaying: freed %d times, want 0", n)
	}
}
