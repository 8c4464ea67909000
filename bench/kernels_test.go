package bench

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestRunKernels(t *testing.T) {
	res, err := RunKernels(context.Background(), KernelConfig{N: 2000, Dim: 24, K: 10, Runs: 3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Kernels) < 5 || res.Bytes != 2000*24*4 {
		t.Fatalf("%d kernels over %d bytes", len(res.Kernels), res.Bytes)
	}
	ceilings := 0
	for _, k := range res.Kernels {
		if !k.SameTopK {
			t.Errorf("%s found another top-10 than vecmath", k.Name)
		}
		if k.MedianMs <= 0 || k.Ratio <= 0 || k.GBPerS <= 0 {
			t.Errorf("%s has non-positive figures: %+v", k.Name, k)
		}
		if k.Ratio == 1 {
			ceilings++
		}
	}
	if ceilings == 0 {
		t.Error("no kernel is the ceiling (ratio 1)")
	}
}

func TestPlainScanMatchesTopK(t *testing.T) {
	cfg := KernelConfig{N: 500, Dim: 16, K: 7, Seed: 3}
	arena, queries := kernelData(cfg)
	for qi, q := range queries {
		got := plainScan(q, arena, cfg.Dim, cfg.K)
		scores := make([]float32, cfg.N)
		for i := range cfg.N {
			var s float32
			for j := range q {
				s += q[j] * arena[i*cfg.Dim+j]
			}
			scores[i] = s
		}
		want := make([]int, cfg.N)
		for i := range want {
			want[i] = i
		}
		slices.SortStableFunc(want, func(a, b int) int {
			switch {
			case scores[a] > scores[b]:
				return -1
			case scores[a] < scores[b]:
				return 1
			}
			return 0
		})
		if !slices.Equal(got, want[:cfg.K]) {
			t.Errorf("query %d: plainScan %v, want %v", qi, got, want[:cfg.K])
		}
	}
}

func TestRunKernelsRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]KernelConfig{
		"k above n": {N: 5, Dim: 4, K: 6, Runs: 1},
		"no runs":   {N: 5, Dim: 4, K: 1},
		"no dim":    {N: 5, K: 1, Runs: 1},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := RunKernels(context.Background(), cfg); !errors.Is(err, ErrBadConfig) {
				t.Errorf("err = %v, want ErrBadConfig", err)
			}
		})
	}
}
