package cluster

import (
	"context"
	"errors"
	"testing"
)

// A first start that stopped after the meta group was created (here: a
// refused --groups) leaves a data dir whose next start finishes the
// bootstrap; it used to wait for a cluster record no one would write.
func TestBootstrapFinishesOnTheNextStart(t *testing.T) {
	cfg := testConfig(t, "n1")
	cfg.Groups = 0
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if c, err := Start(ctx, cfg); !errors.Is(err, ErrInvalidCommand) {
		if c != nil {
			_ = c.Close()
		}
		t.Fatalf("Start with --groups 0: %v, want ErrInvalidCommand", err)
	}
	if !HoldsState(cfg.DataDir) || !bootUnfinished(cfg.DataDir) {
		t.Fatal("the refused start left no meta group or no marker: the case is not reproduced")
	}
	cfg.Groups = testGroups
	c := startWith(t, cfg)
	if c.Info().Groups != testGroups || c.Info().ClusterID == "" {
		t.Fatalf("cluster record %+v", c.Info())
	}
	if bootUnfinished(cfg.DataDir) {
		t.Error("the marker outlived the bootstrap")
	}
	_ = c.Close()
	// An ordinary restart after it.
	c = startWith(t, cfg)
	if c.Info().Groups != testGroups {
		t.Fatalf("after a restart: %+v", c.Info())
	}
}
