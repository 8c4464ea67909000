package raftfsm

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRadixSortMatchesSort: radixSort orders unique keys as a comparison
// sort does, for widths of one to three passes a half and
// for the edge cases of no and one key.
func TestRadixSortMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ n, width int }{{0, 5}, {1, 5}, {1000, 5}, {5000, 11}, {20000, 17}, {3000, 31}} {
		seen := map[uint64]bool{}
		keys := make([]keyedRow, 0, tc.n)
		for len(keys) < tc.n {
			k := r.Uint64N(1<<tc.width)<<32 | r.Uint64N(1<<tc.width)
			if !seen[k] {
				seen[k] = true
				keys = append(keys, keyedRow{k, int32(len(keys))})
			}
		}
		want := slices.Clone(keys)
		slices.SortFunc(want, func(x, y keyedRow) int { return cmp.Compare(x.k, y.k) })
		radixSort(keys, tc.width)
		if !slices.Equal(keys, want) {
			t.Fatalf("n=%d width=%d: radix order differs from a comparison sort", tc.n, tc.width)
		}
	}
}
