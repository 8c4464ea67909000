package cluster

import (
	"fmt"
	"math"
	"testing"
)

func TestJumpHashGolden(t *testing.T) {
	// Buckets 1..19 for each key, as produced by the paper's reference C++
	// implementation (the same values are in widely used ports).
	tests := []struct {
		key  uint64
		want []int
	}{
		{0, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{1, []int{0, 0, 0, 0, 0, 0, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 17, 17}},
		{0xdeadbeef, []int{0, 1, 2, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 16, 16, 16}},
		{0x0ddc0ffeebadf00d, []int{0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 15, 15, 15, 15}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%#x", tt.key), func(t *testing.T) {
			for i, want := range tt.want {
				if got := JumpHash(tt.key, i+1); got != want {
					t.Errorf("JumpHash(%#x, %d) = %d, want %d", tt.key, i+1, got, want)
				}
			}
		})
	}
}

func TestJumpHashLargeBuckets(t *testing.T) {
	f := func(key uint64, buckets, want int) {
		t.Helper()
		if got := JumpHash(key, buckets); got != want {
			t.Errorf("JumpHash(%d, %d) = %d, want %d", key, buckets, got, want)
		}
	}
	// Computed with an independent (Python) transcription of the reference.
	f(math.MaxUint64, 1<<20, 589430)
	f(12345678901234567890, 1000000, 46485)
}

func TestJumpHashDegenerateBuckets(t *testing.T) {
	for _, b := range []int{-5, 0, 1} {
		if got := JumpHash(42, b); got != 0 {
			t.Errorf("JumpHash(42, %d) = %d, want 0", b, got)
		}
	}
}

func TestJumpHashDistribution(t *testing.T) {
	const keys, buckets = 80000, 8
	counts := make([]int, buckets)
	for i := range keys {
		counts[JumpHash(splitmix(uint64(i)), buckets)]++
	}
	want := keys / buckets
	for b, c := range counts {
		if diff := math.Abs(float64(c-want)) / float64(want); diff > 0.05 {
			t.Errorf("bucket %d holds %d keys, want %d ± 5%%", b, c, want)
		}
	}
}

func TestJumpHashStableWhenGrowing(t *testing.T) {
	const keys = 20000
	for _, n := range []int{1, 2, 7, 8, 31} {
		t.Run(fmt.Sprintf("%d->%d", n, n+1), func(t *testing.T) {
			moved := 0
			for i := range keys {
				k := splitmix(uint64(i))
				before, after := JumpHash(k, n), JumpHash(k, n+1)
				if before == after {
					continue
				}
				if after != n {
					t.Fatalf("key %d moved from %d to %d, not to the new bucket %d", i, before, after, n)
				}
				moved++
			}
			want := float64(keys) / float64(n+1)
			if math.Abs(float64(moved)-want) > 0.1*want {
				t.Errorf("moved %d keys, want about %.0f (1/%d)", moved, want, n+1)
			}
		})
	}
}

func TestTenantGroup(t *testing.T) {
	f := func(tenant string, groups int, want uint32) {
		t.Helper()
		if got := TenantGroup(tenant, groups); got != want {
			t.Errorf("TenantGroup(%q, %d) = %d, want %d", tenant, groups, got, want)
		}
	}
	// Golden: FNV-1a 64 then jump hash, computed independently.
	f("org_01J0000000000000000000000", 8, 4)
	f("org_01J0000000000000000000000", 16, 10)
	f("org_01J0000000000000000000000", 1000, 603)
	f("room_abc", 8, 5)
	f("room_abc", 16, 11)
	f("", 8, 2)
	f("anything", 1, 1)
}

func TestTenantGroupRange(t *testing.T) {
	for _, groups := range []int{1, 3, 8, 64} {
		seen := make(map[uint32]bool)
		for i := range 2000 {
			g := TenantGroup(fmt.Sprintf("org_%d", i), groups)
			if g < 1 || int(g) > groups {
				t.Fatalf("TenantGroup(org_%d, %d) = %d, outside 1..%d", i, groups, g, groups)
			}
			seen[g] = true
		}
		if len(seen) != groups {
			t.Errorf("groups=%d: only %d groups used by 2000 tenants", groups, len(seen))
		}
	}
}

// splitmix spreads sequential test keys over the uint64 range.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
