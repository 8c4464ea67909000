package raftfsm

import (
	"math/rand"
	"slices"
	"testing"
)

// TestPairIndexMatchesMap lists random pairs (dense small ids, as the
// concept table hands out, and a few extreme ones) in a pairIndex and a Go
// map, through growth from empty and from a presized table.
func TestPairIndexMatchesMap(t *testing.T) {
	for _, presize := range []int{0, 5000} {
		rng := rand.New(rand.NewSource(int64(presize) + 1))
		p, m := newPairIndex(presize), map[uint64]int32{}
		var zero pairIndex // an edge set's zero value still works
		for i := range 20000 {
			a, b := int32(rng.Intn(300)), int32(rng.Intn(300))
			if i%1000 == 0 {
				a, b = 1<<31-1, 0
			}
			k := pairKey(a, b)
			if i%3 == 0 {
				if got, ok := p.get(k); ok != (m[k] != 0) || ok && got != m[k]-1 {
					t.Fatalf("get(%d, %d) = %d, %v; want %d", a, b, got, ok, m[k]-1)
				}
				continue
			}
			p.put(k, int32(i))
			zero.put(k, int32(i))
			m[k] = int32(i) + 1
		}
		if p.n != len(m) || zero.n != len(m) {
			t.Fatalf("%d and %d pairs listed, want %d", p.n, zero.n, len(m))
		}
		for k, v := range m {
			if got, ok := p.get(k); !ok || got != v-1 {
				t.Fatalf("get(%x) = %d, %v; want %d", k, got, ok, v-1)
			}
			if got, _ := zero.get(k); got != v-1 {
				t.Fatalf("zero-value index: get(%x) = %d, want %d", k, got, v-1)
			}
		}
		if _, ok := p.get(pairKey(400, 400)); ok {
			t.Fatal("an unlisted pair was found")
		}
		if 4*p.n > 3*len(p.keys) {
			t.Fatalf("load %d of %d slots", p.n, len(p.keys))
		}
	}
}

// TestPairBuilderMatchesPuts fills an index through a builder, over
// several batches and with keys put twice, and compares it with the same
// puts made one by one.
func TestPairBuilderMatchesPuts(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	const n = 5*pairBatch + 17
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = pairKey(int32(rng.Intn(5000)), int32(rng.Intn(5000)))
	}
	want, got := newPairIndex(n), newPairIndex(n)
	b := buildPairs(&got)
	for i, k := range keys {
		want.put(k, int32(i))
		b.put(k, int32(i))
	}
	b.wait()
	if got.n != want.n || !slices.Equal(got.keys, want.keys) || !slices.Equal(got.vals, want.vals) {
		t.Fatalf("builder's index differs: %d pairs against %d", got.n, want.n)
	}
	empty := newPairIndex(0)
	buildPairs(&empty).wait() // nothing put: returns at once
	if empty.n != 0 {
		t.Fatal("an empty build listed pairs")
	}
}
