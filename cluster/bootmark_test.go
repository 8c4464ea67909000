package cluster

import (
	"errors"
	"strings"
	"testing"
)

// A first start that stopped after the meta group was created (here: a
// refused --groups) leaves a data dir whose next start finishes the
// bootstrap; it used to wait for a cluster record no one would write.
func TestBootstrapFinishesOnTheNextStart(t *testing.T) {
	cfg := testConfig(t, "n1")
	cfg.Groups = -1
	if err := startRefused(t, cfg, "a cluster with --groups -1"); !errors.Is(err, ErrInvalidCommand) {
		t.Fatalf("Start with --groups -1: %v, want ErrInvalidCommand", err)
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

// A data dir answers to the node id it was created with: another --node-id
// is refused at once, naming the right one.
func TestNodeIDKeptInTheDataDir(t *testing.T) {
	cfg := testConfig(t, "first")
	c := startWith(t, cfg)
	_ = c.Close()
	cfg.NodeID = "second"
	if err := startRefused(t, cfg, "a restart under another --node-id"); !strings.Contains(err.Error(), `belongs to node "first"`) {
		t.Errorf("error %v does not name the data dir's node", err)
	}
	cfg.NodeID = ""
	if c := startWith(t, cfg); c.NodeID() != "first" {
		t.Errorf("without --node-id: %s", c.NodeID())
	}
}
