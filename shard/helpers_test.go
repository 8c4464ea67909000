package shard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// kvSM is the test StateMachine: commands are "key=value", the result is the
// previous value, snapshots are JSON (deterministic: sorted keys).
type kvSM struct {
	mu       sync.Mutex
	data     map[string]string
	restores int
	sizes    []int64 // what each restore's reader told of its size; -1 nothing
}

type kvResult struct {
	Index uint64
	Prev  string
}

func newKV() *kvSM { return &kvSM{data: make(map[string]string)} }

func (s *kvSM) Apply(index uint64, cmd []byte) any {
	k, v, ok := strings.Cut(string(cmd), "=")
	if !ok {
		panic(fmt.Sprintf("undecodable command %q", cmd))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.data[k]
	s.data[k] = v
	return kvResult{Index: index, Prev: prev}
}

func (s *kvSM) Snapshot() (func(io.Writer) error, error) {
	s.mu.Lock()
	copied := maps.Clone(s.data)
	s.mu.Unlock()
	return func(w io.Writer) error { return json.NewEncoder(w).Encode(copied) }, nil
}

func (s *kvSM) Restore(r io.Reader) error {
	size := int64(-1)
	if sr, ok := r.(interface{ Size() int64 }); ok {
		size = sr.Size()
	}
	s.mu.Lock()
	s.sizes = append(s.sizes, size)
	s.mu.Unlock()
	data := make(map[string]string)
	if err := json.NewDecoder(r).Decode(&data); err != nil {
		return err
	}
	s.mu.Lock()
	s.data = data
	s.restores++
	s.mu.Unlock()
	return nil
}

func (s *kvSM) get(k string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.data[k]
}

func (s *kvSM) snapshotData() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.data)
}

func (s *kvSM) restoreCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restores
}

// testLogger discards logs unless SHARD_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("SHARD_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func newTestNode(t *testing.T, id, dir string) *Node {
	t.Helper()
	n, err := NewNode(NodeConfig{NodeID: id, BindAddr: "127.0.0.1:0", DataDir: dir, Logger: testLogger()})
	if err != nil {
		t.Fatalf("NewNode(%s): %v", id, err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func startGroup(t *testing.T, n *Node, cfg GroupConfig, sm StateMachine) *Group {
	t.Helper()
	g, err := n.StartGroup(cfg, sm)
	if err != nil {
		t.Fatalf("StartGroup(%d) on %s: %v", cfg.ID, n.ID(), err)
	}
	return g
}

// testCtx bounds a test step; a guard against hangs, not a timing assertion.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond until it holds (or fails the test after a generous guard).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitLeader waits until g leads its group.
func waitLeader(t *testing.T, g *Group) {
	t.Helper()
	waitFor(t, fmt.Sprintf("group %d to elect itself", g.ID()), g.IsLeader)
}

func propose(t *testing.T, g *Group, cmd string) kvResult {
	t.Helper()
	res, err := g.Propose(testCtx(t), []byte(cmd))
	if err != nil {
		t.Fatalf("Propose(%q): %v", cmd, err)
	}
	return res.(kvResult)
}
