package main

import "testing"

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
