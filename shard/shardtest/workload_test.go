package shardtest_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hebbdb/hebb/raftfsm"
	"github.com/hebbdb/hebb/shard"
	"github.com/hebbdb/hebb/shard/shardtest"
)

// The partition tests replicate the real state machine, raftfsm, so that
// "same state hash" covers atoms, vectors, edges and indexes.
const (
	testTenant = "org_shardtest"
	testDim    = 16
	testGroup  = uint32(1)
)

func newFSM(uint32) shardtest.StateMachine { return raftfsm.New(testDim) }

// smallSnapshots makes groups snapshot and compact often, so that a node
// cut off for a while catches up through InstallSnapshot.
func smallSnapshots(uint32) shard.GroupConfig {
	return shard.GroupConfig{SnapshotThreshold: 64, TrailingLogs: 32, SnapshotInterval: 100 * time.Millisecond}
}

// newWrite returns a write command of one atom with a random unit vector
// (no two are near enough for the write gate to refuse one).
func newWrite(rng *rand.Rand, n int) (raftfsm.ID, []byte) {
	id := raftfsm.ID(uuid.New())
	v := make([]float32, testDim)
	var norm float64
	for i := range v {
		v[i] = float32(rng.NormFloat64())
		norm += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(norm))
	}
	cmd := raftfsm.WriteCmd{Tenant: testTenant, Items: []raftfsm.WriteItem{{
		ID: id, CreatedAt: int64(n + 1), Content: fmt.Sprintf("write %d", n),
		Concepts: []string{fmt.Sprintf("c%d", n%7), fmt.Sprintf("c%d", n%11)}, Domain: "general", Vector: v,
	}}}
	return id, cmd.Encode()
}

// workload is concurrent clients writing through whichever node they find
// leading the group, remembering every acknowledged write.
type workload struct {
	c  *shardtest.Cluster
	mu sync.Mutex
	n  int
	// acked holds the writes Propose acknowledged (nil error, stored).
	acked []raftfsm.ID
}

func newWorkload(c *shardtest.Cluster) *workload { return &workload{c: c} }

// start runs clients until the returned stop function is called; stop
// waits for them.
func (w *workload) start(clients int) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for k := range clients {
		wg.Go(func() { w.client(done, uint64(k)) })
	}
	return func() {
		close(done)
		wg.Wait()
	}
}

func (w *workload) client(done <-chan struct{}, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))
	for {
		select {
		case <-done:
			return
		default:
		}
		i := w.someLeader(rng)
		if i < 0 {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		w.mu.Lock()
		w.n++
		n := w.n
		w.mu.Unlock()
		id, cmd := newWrite(rng, n)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		res, err := w.c.Propose(ctx, i, testGroup, cmd)
		cancel()
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if r, ok := res.(*raftfsm.WriteResults); ok && r.Err == nil && r.Results[0].Stored {
			w.mu.Lock()
			w.acked = append(w.acked, id)
			w.mu.Unlock()
		}
		time.Sleep(2 * time.Millisecond) // leave the CPU to raft under -race
	}
}

// someLeader picks a running node that believes it leads the group (a
// stale leader included: its writes must never be acknowledged wrongly).
func (w *workload) someLeader(rng *rand.Rand) int {
	var leaders []int
	for i := range w.c.Size() {
		if n := w.c.Node(i); n != nil && n.Group(testGroup).IsLeader() {
			leaders = append(leaders, i)
		}
	}
	if len(leaders) == 0 {
		return -1
	}
	return leaders[rng.IntN(len(leaders))]
}

func (w *workload) ackedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// waitProgress waits until at least more writes beyond from were acknowledged.
func (w *workload) waitProgress(from, more int) {
	w.c.WaitFor(fmt.Sprintf("%d more acknowledged writes", more), func() bool { return w.ackedCount() >= from+more })
}

// checkAcked fails the test for any acknowledged write missing from a
// running replica.
func (w *workload) checkAcked(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	acked := append([]raftfsm.ID(nil), w.acked...)
	w.mu.Unlock()
	for i := range w.c.Size() {
		if !w.c.Running(i) {
			continue
		}
		fsm := w.c.StateMachine(i, testGroup).(*raftfsm.FSM)
		missing := 0
		for _, id := range acked {
			if _, ok := fsm.Get(testTenant, id); !ok {
				missing++
			}
		}
		if missing > 0 {
			t.Errorf("%s lacks %d of %d acknowledged writes", w.c.ID(i), missing, len(acked))
		}
	}
}
