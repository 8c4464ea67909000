package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hebbdb/hebb/shard"
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

// A data dir that lost its meta group but holds data groups is refused: a
// new cluster on it would answer with a new key, the data out of reach.
// One that lost only the meta log, its snapshot still there, restores it.
func TestMetaGroupLost(t *testing.T) {
	cfg := testConfig(t, "n1")
	c := startWith(t, cfg)
	want := c.Info().ClusterID
	if err := c.metaG.Raft().Snapshot().Error(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	_ = c.Close()
	meta := shard.GroupDir(cfg.DataDir, MetaGroupID)
	if err := os.Remove(filepath.Join(meta, "raft.db")); err != nil {
		t.Fatal(err)
	}
	c = startWith(t, cfg)
	if got := c.Info().ClusterID; got != want {
		t.Fatalf("restored from the meta snapshot: cluster %s, want %s", got, want)
	}
	_ = c.Close()

	if err := os.RemoveAll(meta); err != nil {
		t.Fatal(err)
	}
	err := startRefused(t, cfg, "a data dir without its meta group")
	if err == nil || !strings.Contains(err.Error(), "not the meta group") || !strings.Contains(err.Error(), "cluster-id") {
		t.Fatalf("error %v does not say the meta group is missing", err)
	}
	if err := os.Remove(filepath.Join(cfg.DataDir, clusterIDFile)); err != nil {
		t.Fatal(err)
	}
	err = startRefused(t, cfg, "data groups without their meta group")
	if err == nil || !strings.Contains(err.Error(), filepath.Join("raft", "group-1")) {
		t.Fatalf("error %v does not name the data groups", err)
	}
}

// A one-node cluster whose data group lost its raft.db before it took a
// snapshot (moved aside, as a damaged log's error advises) starts the
// group again, empty, this node its voter: it waited for a leader forever
// and the node was never ready.
func TestLostDataLogWithoutSnapshotStartsEmpty(t *testing.T) {
	cfg := testConfig(t, "n1")
	c := startWith(t, cfg)
	_ = c.Close()
	if err := os.Remove(filepath.Join(shard.GroupDir(cfg.DataDir, 1), "raft.db")); err != nil {
		t.Fatal(err)
	}
	c = startWith(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a hang guard
	defer cancel()
	if err := c.groups[1].WaitLeader(ctx); err != nil {
		t.Fatalf("group 1 after its raft.db was lost: %v", err)
	}
}

// A start cancelled while its data groups start ends without starting the
// rest, and the next start finishes the bootstrap. It went on starting
// every group before it looked at the cancellation: a stop signal took
// 11 s at 3,000 groups, and never came at 100,000.
func TestStartCancelledDuringDataGroups(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "n1")
	cfg.Groups = MaxGroups
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // cancel once the first data group is starting
		first := shard.GroupDir(cfg.DataDir, 1)
		for ctx.Err() == nil {
			if _, err := os.Stat(first); err == nil {
				cancel()
			}
			time.Sleep(time.Millisecond)
		}
	}()
	done := make(chan error, 1)
	go func() {
		c, err := Start(ctx, cfg)
		if err == nil {
			_ = c.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Start cancelled during the data groups: %v, want context.Canceled", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Start still running after its cancellation")
	}
	// The cancellation came as group 1 started; a few more may have been
	// starting with it (one per core), not most of them.
	if n := len(shard.GroupsOnDisk(cfg.DataDir)) - 1; n >= cfg.Groups/2 {
		t.Errorf("%d of %d data groups started: the start did not stop at the cancellation", n, cfg.Groups)
	}
	if !bootUnfinished(cfg.DataDir) {
		t.Fatal("the cancelled first start left no bootstrap marker")
	}
	c := startWith(t, cfg)
	if c.Info().Groups != cfg.Groups || bootUnfinished(cfg.DataDir) {
		t.Errorf("the next start: %+v, marker left %v", c.Info(), bootUnfinished(cfg.DataDir))
	}
}

// A data dir whose --join failed is refused at once by a start without
// --join, saying so (it waited 60 s for a meta leader that would never
// count it, then failed "meta group not readable"); started with --join
// again, it joins.
func TestUnfinishedJoin(t *testing.T) {
	t.Parallel()
	dead := freeLoopbackAddr(t) // no gossip there
	cfg := testConfig(t, "late", dead)
	cfg.WaitTimeout = time.Second
	if err := startRefused(t, cfg, "a join through no one"); err == nil {
		t.Fatal("no error")
	}
	if !joinUnfinished(cfg.DataDir) || !HoldsState(cfg.DataDir) {
		t.Fatalf("after the failed join: marker %v, state %v", joinUnfinished(cfg.DataDir), HoldsState(cfg.DataDir))
	}
	alone := cfg
	alone.Join = nil
	start := time.Now()
	err := startRefused(t, alone, "a start without --join")
	if err == nil || !strings.Contains(err.Error(), "never finished joining") {
		t.Fatalf("start without --join: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second { // guard: it waited out a timeout
		t.Fatalf("refused after %s", d)
	}
	n1 := startTestNode(t, "n1")
	again := cfg
	again.Join, again.WaitTimeout = []string{n1.self.GossipAddr}, 0
	startWith(t, again)
	if joinUnfinished(cfg.DataDir) {
		t.Fatal("the join marker outlived the join")
	}
	if id, _ := readClusterID(cfg.DataDir); id == "" || id != n1.Info().ClusterID {
		t.Fatalf("cluster id %q, want n1's", id)
	}
}

// A join refused for a cluster key that differs says so: memberlist's own
// words ("remote state is encrypted and encryption is not configured")
// name no flag.
func TestJoinKeyHint(t *testing.T) {
	for _, tc := range []struct {
		err  string
		hint bool
	}{
		{"failed to join 10.0.0.1:7946: no installed keys could decrypt the message", true},
		{"failed to join 10.0.0.1:7946: remote state is encrypted and encryption is not configured", true},
		{"failed to join 10.0.0.1:7946: dial tcp 10.0.0.1:7946: connect: connection refused", false},
	} {
		if got := keyHint(errors.New(tc.err)) != ""; got != tc.hint {
			t.Errorf("%q: hint %v, want %v", tc.err, got, tc.hint)
		}
	}
}
