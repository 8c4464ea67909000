package main

import "testing"

func TestGCPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},
		{100 << 20, 100}, // small: Go's default
		{512 << 20, 50},  // the minimum headroom
		{1 << 30, 25},
		{2 << 30, 20}, // a fifth
		{4 << 30, 20},
	} {
		if got := gcPercent(c.live); got != c.want {
			t.Errorf("gcPercent(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}
