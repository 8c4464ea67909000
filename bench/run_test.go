package bench

import (
	"context"
	"errors"
	"testing"
)

// Kernel flags are checked before anything runs: a bad --runs was refused
// only after the whole load phase of `default`.
func TestConfigChecksKernelFlags(t *testing.T) {
	for _, tc := range []struct {
		name     string
		workload string
		edit     func(*KernelConfig)
		bad      bool
	}{
		{"default, runs 0", WorkloadDefault, func(k *KernelConfig) { k.Runs = 0 }, true},
		{"kernels, n below k", WorkloadKernels, func(k *KernelConfig) { k.N = 5 }, true},
		{"search, dim 0", WorkloadSearch, func(k *KernelConfig) { k.Dim = 0 }, true},
		{"search, runs 0 (its baseline runs 5)", WorkloadSearch, func(k *KernelConfig) { k.Runs = 0 }, false},
		{"write, runs 0 (no kernels)", WorkloadWrite, func(k *KernelConfig) { k.Runs = 0 }, false},
	} {
		cfg := DefaultConfig()
		cfg.Workload = tc.workload
		tc.edit(&cfg.Kernels)
		if err := cfg.Check(); errors.Is(err, ErrBadConfig) != tc.bad {
			t.Errorf("%s: check() = %v, want bad %v", tc.name, err, tc.bad)
		}
	}
}

func TestWhileCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	block := make(chan struct{})
	defer close(block)
	go cancel()
	if err := whileCtx(ctx, func() error { <-block; return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("whileCtx = %v, want context.Canceled", err)
	}
	if err := whileCtx(context.Background(), func() error { return ErrBadConfig }); !errors.Is(err, ErrBadConfig) {
		t.Fatalf("whileCtx = %v, want f's error", err)
	}
}
