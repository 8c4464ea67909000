package shard

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func TestSingleNodeBootstrap(t *testing.T) {
	n := newTestNode(t, "n1", t.TempDir())
	sm := newKV()
	start := time.Now()
	g := startGroup(t, n, GroupConfig{ID: 0, Bootstrap: true}, sm)
	if err := g.WaitLeader(testCtx(t)); err != nil {
		t.Fatalf("WaitLeader: %v", err)
	}
	waitLeader(t, g)
	t.Logf("single node elected itself in %v", time.Since(start))

	if id, addr := g.Leader(); id != "n1" || addr != n.Addr() {
		t.Fatalf("Leader() = %q, %q; want n1, %s", id, addr, n.Addr())
	}
	first := propose(t, g, "a=1")
	second := propose(t, g, "a=2")
	if first.Prev != "" || second.Prev != "1" || second.Index <= first.Index {
		t.Fatalf("Apply results %+v, %+v", first, second)
	}
	if got := g.AppliedIndex(); got != second.Index {
		t.Fatalf("AppliedIndex() = %d, want %d", got, second.Index)
	}
	if !g.soleVoter() {
		t.Fatal("soleVoter() = false in a group of one voter")
	}
	if err := g.ReadIndex(testCtx(t)); err != nil {
		t.Fatalf("ReadIndex: %v", err)
	}
	if sm.get("a") != "2" {
		t.Fatalf("state a = %q", sm.get("a"))
	}
	if s := g.Stats(); s["group"] != "0" || s["state"] != "Leader" {
		t.Fatalf("Stats() = %v", s)
	}
	if gs := n.Groups(); len(gs) != 1 || n.Group(0) != g || n.Group(1) != nil {
		t.Fatalf("Groups() = %v", gs)
	}
}

func TestGroupErrors(t *testing.T) {
	n := newTestNode(t, "n1", t.TempDir())
	g := startGroup(t, n, GroupConfig{ID: 3, Bootstrap: true}, newKV())
	waitLeader(t, g)

	if _, err := n.StartGroup(GroupConfig{ID: 3}, newKV()); !errors.Is(err, ErrGroupStarted) {
		t.Fatalf("second StartGroup: %v, want ErrGroupStarted", err)
	}
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	canceled, cancel2 := context.WithCancel(context.Background())
	cancel2()

	tests := []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"deadline passed", expired, ErrTimeout},
		{"canceled", canceled, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := g.Propose(tt.ctx, []byte("k=v")); !errors.Is(err, tt.want) {
				t.Errorf("Propose: %v, want %v", err, tt.want)
			}
			if err := g.ReadIndex(tt.ctx); !errors.Is(err, tt.want) {
				t.Errorf("ReadIndex: %v, want %v", err, tt.want)
			}
		})
	}

	if err := n.StopGroup(3); err != nil {
		t.Fatalf("StopGroup: %v", err)
	}
	if _, err := g.Propose(testCtx(t), []byte("k=v")); !errors.Is(err, ErrShutdown) {
		t.Fatalf("Propose after stop: %v, want ErrShutdown", err)
	}
	if err := g.ReadIndex(testCtx(t)); !errors.Is(err, ErrShutdown) {
		t.Fatalf("ReadIndex after stop: %v, want ErrShutdown", err)
	}
	if err := n.StopGroup(3); !errors.Is(err, ErrUnknownGroup) {
		t.Fatalf("StopGroup twice: %v, want ErrUnknownGroup", err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := n.StartGroup(GroupConfig{ID: 4, Bootstrap: true}, newKV()); !errors.Is(err, ErrShutdown) {
		t.Fatalf("StartGroup after Close: %v, want ErrShutdown", err)
	}
}

func TestReadIndexSteadyStateWritesNothing(t *testing.T) {
	n := newTestNode(t, "n1", t.TempDir())
	g := startGroup(t, n, GroupConfig{ID: 1, Bootstrap: true}, newKV())
	waitLeader(t, g)
	propose(t, g, "x=1")
	if err := g.ReadIndex(testCtx(t)); err != nil { // may commit this term's barrier
		t.Fatalf("first ReadIndex: %v", err)
	}
	last := g.Raft().LastIndex()
	for i := range 20 {
		if err := g.ReadIndex(testCtx(t)); err != nil {
			t.Fatalf("ReadIndex %d: %v", i, err)
		}
	}
	if got := g.Raft().LastIndex(); got != last {
		t.Fatalf("ReadIndex wrote to the log: last index %d -> %d", last, got)
	}
}

// gatedKV is a kvSM whose Apply of the command "slow=1" waits until
// release is closed, after telling entered.
type gatedKV struct {
	*kvSM
	entered, release chan struct{}
}

func (s *gatedKV) Apply(index uint64, cmd []byte) any {
	if string(cmd) == "slow=1" {
		close(s.entered)
		<-s.release
	}
	return s.kvSM.Apply(index, cmd)
}

// gatedGroup starts a single-node group whose state machine can hold a
// command inside its apply (gatedKV), with x=1 applied.
func gatedGroup(t *testing.T) (*Group, *gatedKV) {
	n := newTestNode(t, "n1", t.TempDir())
	sm := &gatedKV{kvSM: newKV(), entered: make(chan struct{}), release: make(chan struct{})}
	g := startGroup(t, n, GroupConfig{ID: 1, Bootstrap: true}, sm)
	waitLeader(t, g)
	propose(t, g, "x=1")
	return g, sm
}

// applySlow proposes slow=1 and returns once it is committed and held inside
// its apply: slow gets its Propose's error, release lets the apply return.
func applySlow(t *testing.T, g *Group, sm *gatedKV) (slow chan error, release func()) {
	var once sync.Once
	release = func() { once.Do(func() { close(sm.release) }) }
	t.Cleanup(release) // before the node closes: its apply must return
	slow = make(chan error, 1)
	go func() {
		_, err := g.Propose(testCtx(t), []byte("slow=1"))
		slow <- err
	}()
	<-sm.entered
	return slow, release
}

// TestReadIndexDoesNotWaitForUnacknowledged checks that a read waits for no
// command that is committed but still being applied (none of its
// proposers has its result yet, so the read may precede it), and that it
// reflects every command acknowledged before it.
func TestReadIndexDoesNotWaitForUnacknowledged(t *testing.T) {
	g, sm := gatedGroup(t)
	if err := g.ReadIndex(testCtx(t)); err != nil { // this term's barrier
		t.Fatalf("first ReadIndex: %v", err)
	}
	slow, release := applySlow(t, g, sm)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.ReadIndex(ctx); err != nil {
		t.Fatalf("ReadIndex while a command is being applied: %v", err)
	}
	select {
	case err := <-slow:
		t.Fatalf("the slow command was acknowledged before its apply returned: %v", err)
	default:
	}
	if got := sm.snapshotData(); got["x"] != "1" || got["slow"] != "" {
		t.Fatalf("state read while the slow command applies = %v, want x=1 only", got)
	}
	release()
	if err := <-slow; err != nil {
		t.Fatalf("Propose(slow=1): %v", err)
	}
	if err := g.ReadIndex(testCtx(t)); err != nil {
		t.Fatalf("ReadIndex after the slow command: %v", err)
	}
	if got := sm.snapshotData(); got["slow"] != "1" {
		t.Fatalf("state after the acknowledged slow command = %v", got)
	}
}

// TestLeaderReadIndexOmitsUnacknowledged checks that the index a follower's
// read waits for covers the acknowledged commands and not one committed but
// still being applied on the leader.
func TestLeaderReadIndexOmitsUnacknowledged(t *testing.T) {
	g, sm := gatedGroup(t)
	acked, err := g.LeaderReadIndex(testCtx(t))
	if err != nil {
		t.Fatalf("first LeaderReadIndex: %v", err)
	}
	if acked == 0 || acked != g.fsm.applied() {
		t.Fatalf("LeaderReadIndex = %d, applied %d", acked, g.fsm.applied())
	}
	slow, release := applySlow(t, g, sm)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	idx, err := g.LeaderReadIndex(ctx)
	if err != nil {
		t.Fatalf("LeaderReadIndex while a command is being applied: %v", err)
	}
	if ci := g.Raft().CommitIndex(); idx != acked || ci <= idx {
		t.Fatalf("LeaderReadIndex = %d while the slow command (commit index %d) applies, want %d", idx, ci, acked)
	}
	release()
	if err := <-slow; err != nil {
		t.Fatalf("Propose(slow=1): %v", err)
	}
	if idx, err = g.LeaderReadIndex(testCtx(t)); err != nil || idx <= acked {
		t.Fatalf("LeaderReadIndex after the slow command = %d, %v; want more than %d", idx, err, acked)
	}
}

func TestRestartRestoresSnapshotAndLog(t *testing.T) {
	dir := t.TempDir()
	cfg := GroupConfig{ID: 2, Bootstrap: true, SnapshotThreshold: 16, SnapshotInterval: 50 * time.Millisecond, TrailingLogs: 8}
	n := newTestNode(t, "n1", dir)
	g := startGroup(t, n, cfg, newKV())
	waitLeader(t, g)
	want := make(map[string]string)
	write := func(g *Group, i int) {
		k, v := fmt.Sprintf("k%d", i%17), fmt.Sprintf("v%d", i)
		propose(t, g, k+"="+v)
		want[k] = v
	}
	for i := range 60 {
		write(g, i)
	}
	if err := g.Raft().Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		t.Fatalf("Snapshot: %v", err)
	}
	for i := 60; i < 70; i++ { // replayed from the log after the restore
		write(g, i)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	n2 := newTestNode(t, "n1", dir)
	sm := newKV()
	g2 := startGroup(t, n2, cfg, sm)
	if sm.restoreCount() == 0 {
		t.Fatalf("no snapshot restored on start")
	}
	waitLeader(t, g2)
	if err := g2.ReadIndex(testCtx(t)); err != nil {
		t.Fatalf("ReadIndex after restart: %v", err)
	}
	if got := sm.snapshotData(); !maps.Equal(got, want) {
		t.Fatalf("state after restart = %v, want %v", got, want)
	}
	write(g2, 70)
	if err := g2.ReadIndex(testCtx(t)); err != nil {
		t.Fatalf("ReadIndex after write: %v", err)
	}
	if got := sm.snapshotData(); !maps.Equal(got, want) {
		t.Fatalf("state after restart and write = %v, want %v", got, want)
	}
}

func TestCloseSnapshotsGrownLog(t *testing.T) {
	tests := []struct {
		name      string
		writes    int
		size      int // bytes of each write's value
		wantSnaps bool
	}{
		{"grown by a quarter", 30, 1, true},
		{"barely grown", 3, 1, false},
		// Few entries, but a quarter of SnapshotBytes: a restart would
		// replay them all through apply.
		{"grown by bytes", 3, 2 << 10, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			n := newTestNode(t, "n1", dir)
			cfg := GroupConfig{ID: 5, Bootstrap: true, SnapshotThreshold: 100, SnapshotBytes: 16 << 10}
			g := startGroup(t, n, cfg, newKV())
			waitLeader(t, g)
			for i := range tt.writes {
				propose(t, g, fmt.Sprintf("k=%d%s", i, strings.Repeat("x", tt.size)))
			}
			if err := n.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			snaps, err := raft.NewFileSnapshotStore(filepath.Join(dir, "raft", "group-5"), 2, nil)
			if err != nil {
				t.Fatalf("open snapshot store: %v", err)
			}
			metas, err := snaps.List()
			if err != nil {
				t.Fatalf("list snapshots: %v", err)
			}
			if got := len(metas) > 0; got != tt.wantSnaps {
				t.Fatalf("snapshot taken on close = %v, want %v", got, tt.wantSnaps)
			}
		})
	}
}

// TestRestartRestoreTellsSize restarts a group from its snapshot: raft
// hands the state machine a reader of its own that tells the size of the
// state (the snapshot file less the header), so raftfsm can decode the
// snapshot as it reads it instead of reading it whole first.
func TestRestartRestoreTellsSize(t *testing.T) {
	dir := t.TempDir()
	cfg := GroupConfig{ID: 2, Bootstrap: true, SnapshotThreshold: 100}
	n := newTestNode(t, "n1", dir)
	g := startGroup(t, n, cfg, newKV())
	waitLeader(t, g)
	for i := range 30 {
		propose(t, g, fmt.Sprintf("k=%d", i))
	}
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	snaps, err := raft.NewFileSnapshotStore(filepath.Join(dir, "raft", "group-2"), 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	metas, err := snaps.List()
	if err != nil || len(metas) == 0 {
		t.Fatalf("no snapshot on close: %v", err)
	}
	sm := newKV()
	startGroup(t, newTestNode(t, "n1", dir), cfg, sm)
	sm.mu.Lock()
	defer sm.mu.Unlock()
	if want := metas[0].Size - snapshotHeaderLen; !slices.Equal(sm.sizes, []int64{want}) || sm.data["k"] != "29" {
		t.Fatalf("restores saw sizes %v and k=%q, want [%d] and 29", sm.sizes, sm.data["k"], want)
	}
}

func TestDataDirLockedByAnotherNode(t *testing.T) {
	old := boltLockTimeout
	boltLockTimeout = 100 * time.Millisecond
	t.Cleanup(func() { boltLockTimeout = old })

	dir := t.TempDir()
	a := newTestNode(t, "a", dir)
	startGroup(t, a, GroupConfig{ID: 0, Bootstrap: true}, newKV())
	b := newTestNode(t, "b", dir)
	if _, err := b.StartGroup(GroupConfig{ID: 0, Bootstrap: true}, newKV()); err == nil {
		t.Fatalf("second node opened a locked raft.db")
	}
	if b.Group(0) != nil {
		t.Fatalf("failed group is registered")
	}
	// The failed start released the group id.
	if _, err := b.StartGroup(GroupConfig{ID: 0}, newKV()); err == nil || errors.Is(err, ErrGroupStarted) {
		t.Fatalf("second attempt: %v, want a lock error", err)
	}
}

// A bootstrap cut short after its first write (the current term, before the
// configuration entry) is finished by the next bootstrapping start: the
// group used to have state but no voter ("no known peers") for ever.
func TestBootstrapInterruptedAfterTerm(t *testing.T) {
	dir := t.TempDir()
	gdir := filepath.Join(dir, "raft", "group-2")
	if err := os.MkdirAll(gdir, 0o700); err != nil {
		t.Fatal(err)
	}
	store, err := openLogStore(filepath.Join(gdir, "raft.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SetUint64([]byte("CurrentTerm"), 1); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	n := newTestNode(t, "n1", dir)
	g := startGroup(t, n, GroupConfig{ID: 2, Bootstrap: true}, newKV())
	if err := g.WaitLeader(testCtx(t)); err != nil {
		t.Fatalf("WaitLeader after an interrupted bootstrap: %v", err)
	}
	if r := propose(t, g, "a=1"); r.Prev != "" {
		t.Fatalf("first write %+v", r)
	}
}
