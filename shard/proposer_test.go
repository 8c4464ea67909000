package shard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// fakeLog stands in for raft.Apply: every entry is applied at once through a
// fsmAdapter, and its future resolves when released (at once unless hold).
type fakeLog struct {
	mu      sync.Mutex
	fsm     *fsmAdapter
	entries [][]byte
	futures []*fakeFuture
	hold    bool  // new futures wait for release
	err     error // new futures fail with err and apply nothing
}

type fakeFuture struct {
	release chan struct{}
	err     error
	resp    any
}

func (f *fakeFuture) Error() error  { <-f.release; return f.err }
func (f *fakeFuture) Index() uint64 { return 0 }
func (f *fakeFuture) Response() any { return f.resp }

func (l *fakeLog) apply(data []byte, _ time.Duration) raft.ApplyFuture {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, data)
	f := &fakeFuture{release: make(chan struct{}), err: l.err}
	if l.err == nil {
		f.resp = l.fsm.Apply(&raft.Log{Index: uint64(len(l.entries)), Type: raft.LogCommand, Data: data})
	}
	if !l.hold {
		close(f.release)
	}
	l.futures = append(l.futures, f)
	return f
}

// set changes how later entries are answered.
func (l *fakeLog) set(hold bool, err error) {
	l.mu.Lock()
	l.hold, l.err = hold, err
	l.mu.Unlock()
}

// release resolves the future of entry i (0-based).
func (l *fakeLog) release(i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	close(l.futures[i].release)
}

func (l *fakeLog) sent() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]byte(nil), l.entries...)
}

func newFakeProposer() (*proposer, *fakeLog, chan struct{}) {
	l := &fakeLog{fsm: newFSMAdapter(newKV(), "test")}
	done := make(chan struct{})
	p := newProposer(l.apply, done, proposeBatch.WithLabelValues("test"))
	return p, l, done
}

func (p *proposer) queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

func (p *proposer) senders() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inflight
}

type proposeOutcome struct {
	cmd string
	res any
	err error
}

// proposeAsync runs one propose per command, each in its own goroutine.
func proposeAsync(ctx context.Context, p *proposer, cmds ...string) <-chan proposeOutcome {
	out := make(chan proposeOutcome, len(cmds))
	for _, cmd := range cmds {
		go func() {
			res, err := p.propose(ctx, []byte(cmd))
			out <- proposeOutcome{cmd, res, err}
		}()
	}
	return out
}

// blockFirst has p send "first=1" as an entry whose result is held, and
// returns its outcome.
func blockFirst(t *testing.T, p *proposer, l *fakeLog) <-chan proposeOutcome {
	t.Helper()
	l.set(true, nil)
	first := proposeAsync(testCtx(t), p, "first=1")
	waitFor(t, "the first entry", func() bool { return len(l.sent()) == 1 })
	return first
}

func keyCmds(n int) []string {
	cmds := make([]string, n)
	for i := range cmds {
		cmds[i] = fmt.Sprintf("k%d=v%d", i, i)
	}
	return cmds
}

func TestProposerLoneCommandIsPlain(t *testing.T) {
	p, l, _ := newFakeProposer()
	wants := []kvResult{{Index: 1}, {Index: 2, Prev: "1"}}
	for i, cmd := range []string{"a=1", "a=2"} {
		res, err := p.propose(testCtx(t), []byte(cmd))
		if err != nil {
			t.Fatalf("propose(%q): %v", cmd, err)
		}
		if want := wants[i]; res != want {
			t.Fatalf("propose(%q) = %#v, want %#v", cmd, res, want)
		}
		if got := l.sent()[i]; string(got) != cmd {
			t.Fatalf("entry %d = %q, want the plain command", i, got)
		}
	}
	// A sender hands out its result before it leaves: wait for it to go
	// (a sender that stayed would fail this after waitFor's deadline).
	waitFor(t, "the sender to stop", func() bool { return p.senders() == 0 })
}

func TestProposerWrapsMarkerCommand(t *testing.T) {
	p, l, _ := newFakeProposer()
	cmd := string([]byte{envelopeMarker}) + "k=v"
	res, err := p.propose(testCtx(t), []byte(cmd))
	if err != nil || res != (kvResult{Index: 1}) {
		t.Fatalf("propose = %#v, %v", res, err)
	}
	cmds, err := decodeEnvelope(l.sent()[0])
	if err != nil || len(cmds) != 1 || string(cmds[0]) != cmd {
		t.Fatalf("entry %x is not an envelope of the command: %q, %v", l.sent()[0], cmds, err)
	}
}

func TestProposerBatchesWhileInFlight(t *testing.T) {
	p, l, _ := newFakeProposer()
	first := blockFirst(t, p, l)
	cmds := keyCmds(10)
	out := proposeAsync(testCtx(t), p, cmds...)
	waitFor(t, "10 queued proposals", func() bool { return p.queued() == 10 })
	l.set(false, nil)
	l.release(0)

	if o := <-first; o.err != nil || o.res != (kvResult{Index: 1}) {
		t.Fatalf("first = %#v, %v", o.res, o.err)
	}
	for range cmds {
		o := <-out
		if o.err != nil || o.res != (kvResult{Index: 2}) {
			t.Errorf("propose(%q) = %#v, %v; want its own result in entry 2", o.cmd, o.res, o.err)
		}
	}
	sent := l.sent()
	if len(sent) != 2 {
		t.Fatalf("%d entries sent, want 2", len(sent))
	}
	batch, err := decodeEnvelope(sent[1])
	if err != nil || len(batch) != len(cmds) {
		t.Fatalf("second entry: %q, %v; want an envelope of %d commands", batch, err, len(cmds))
	}
}

// TestProposerLargeCommandOverlaps: a large command does not wait for the
// entry in flight (its log write overlaps that entry's apply), but at most
// maxInflightLarge entries are in flight and small commands still queue.
func TestProposerLargeCommandOverlaps(t *testing.T) {
	p, l, _ := newFakeProposer()
	first := blockFirst(t, p, l)
	big := "big=" + strings.Repeat("x", largeCommand)
	bigOut := proposeAsync(testCtx(t), p, big)
	waitFor(t, "the large command's own entry", func() bool { return len(l.sent()) == 2 })
	if got := string(l.sent()[1]); got != big {
		t.Fatalf("second entry is %d bytes, want the large command alone", len(got))
	}
	big2 := "big2=" + strings.Repeat("y", largeCommand)
	rest := proposeAsync(testCtx(t), p, "small=1", big2)
	waitFor(t, "two queued proposals", func() bool { return p.queued() == 2 })
	if n := len(l.sent()); n != 2 || p.senders() != maxInflightLarge {
		t.Fatalf("%d entries sent by %d senders, want 2 and %d", n, p.senders(), maxInflightLarge)
	}
	l.set(false, nil)
	l.release(0)
	l.release(1)
	for _, ch := range []<-chan proposeOutcome{first, bigOut, rest, rest} {
		if o := <-ch; o.err != nil {
			t.Fatalf("propose(%.10q): %v", o.cmd, o.err)
		}
	}
	if n := len(l.sent()); n != 3 {
		t.Fatalf("%d entries, want 3 (the queued pair together)", n)
	}
	waitFor(t, "the senders to stop", func() bool { return p.senders() == 0 })
}

// TestProposerSecondSenderLeavesSmallCommands: the sender a large command
// started does not go on sending small commands beside the first sender:
// they wait for it, one entry in flight.
func TestProposerSecondSenderLeavesSmallCommands(t *testing.T) {
	p, l, _ := newFakeProposer()
	first := blockFirst(t, p, l)
	bigOut := proposeAsync(testCtx(t), p, "big="+strings.Repeat("x", largeCommand))
	waitFor(t, "the large command's own entry", func() bool { return len(l.sent()) == 2 })
	small := proposeAsync(testCtx(t), p, keyCmds(3)...)
	waitFor(t, "three queued proposals", func() bool { return p.queued() == 3 })
	l.release(1)
	if o := <-bigOut; o.err != nil {
		t.Fatalf("large command: %v", o.err)
	}
	waitFor(t, "the second sender to stop", func() bool { return p.senders() == 1 })
	if n, q := len(l.sent()), p.queued(); n != 2 || q != 3 {
		t.Fatalf("%d entries sent and %d queued, want the small commands still queued behind entry 1", n, q)
	}
	l.set(false, nil)
	l.release(0)
	for _, ch := range []<-chan proposeOutcome{first, small, small, small} {
		if o := <-ch; o.err != nil {
			t.Fatalf("propose(%q): %v", o.cmd, o.err)
		}
	}
	if n := len(l.sent()); n != 3 {
		t.Fatalf("%d entries, want 3 (the small commands together)", n)
	}
}

func TestProposerErrorReachesEveryWaiter(t *testing.T) {
	tests := []struct {
		name   string
		raft   error
		want   []error
		unsure bool // the message says the outcome is unknown
	}{
		{"leadership lost after append", raft.ErrLeadershipLost, []error{ErrTimeout, raft.ErrLeadershipLost}, true},
		{"not leader", raft.ErrNotLeader, []error{ErrNotLeader, raft.ErrNotLeader}, false},
		{"transfer in progress", raft.ErrLeadershipTransferInProgress, []error{ErrNotLeader}, false},
		{"raft shut down", raft.ErrRaftShutdown, []error{ErrShutdown}, false},
		{"enqueue timeout", raft.ErrEnqueueTimeout, []error{ErrTimeout}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, l, _ := newFakeProposer()
			first := blockFirst(t, p, l)
			out := proposeAsync(testCtx(t), p, keyCmds(5)...)
			waitFor(t, "5 queued proposals", func() bool { return p.queued() == 5 })
			l.set(false, tt.raft)
			l.release(0)
			if o := <-first; o.err != nil {
				t.Fatalf("first: %v", o.err)
			}
			for range 5 {
				o := <-out
				for _, want := range tt.want {
					if !errors.Is(o.err, want) {
						t.Errorf("propose(%q): %v, want %v", o.cmd, o.err, want)
					}
				}
				if o.err != nil && strings.Contains(o.err.Error(), "outcome unknown") != tt.unsure {
					t.Errorf("propose(%q): %v; outcome unknown should be %v", o.cmd, o.err, tt.unsure)
				}
			}
		})
	}
}

func TestProposerDropsAbandonedProposals(t *testing.T) {
	p, l, _ := newFakeProposer()
	first := blockFirst(t, p, l)
	ctx, cancel := context.WithCancel(testCtx(t))
	abandoned := proposeAsync(ctx, p, "gone=1")
	waitFor(t, "the queued proposal", func() bool { return p.queued() == 1 })
	cancel()
	if o := <-abandoned; !errors.Is(o.err, context.Canceled) {
		t.Fatalf("abandoned propose: %v, want context.Canceled", o.err)
	}
	live := proposeAsync(testCtx(t), p, "live=1")
	waitFor(t, "the live proposal", func() bool { return p.queued() == 2 })
	l.set(false, nil)
	l.release(0)
	<-first
	if o := <-live; o.err != nil {
		t.Fatalf("live propose: %v", o.err)
	}
	if sent := l.sent(); len(sent) != 2 || string(sent[1]) != "live=1" {
		t.Fatalf("entries %q; want the live command alone and plain after the first", sent)
	}
}

func TestProposerShutdownReleasesWaiters(t *testing.T) {
	p, l, done := newFakeProposer()
	first := blockFirst(t, p, l)
	queued := proposeAsync(testCtx(t), p, "q=1")
	waitFor(t, "the queued proposal", func() bool { return p.queued() == 1 })
	close(done)
	for _, ch := range []<-chan proposeOutcome{first, queued} {
		if o := <-ch; !errors.Is(o.err, ErrShutdown) {
			t.Errorf("propose(%q) after shutdown: %v", o.cmd, o.err)
		}
	}
	l.set(false, raft.ErrRaftShutdown)
	l.release(0)
	waitFor(t, "the sender to stop", func() bool { return p.senders() == 0 })
}

func TestProposerBatchLimits(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name  string
		sizes []int // command sizes in the queue
		want  []int // commands per batch
	}{
		{"count cap", repeat(300, 10), []int{maxBatchCommands, 300 - maxBatchCommands}},
		{"byte cap", repeat(5, mib), []int{4, 1}},
		{"oversized command alone", []int{5 * mib, 10, 10}, []int{1, 2}},
		{"oversized command after others", []int{10, 5 * mib}, []int{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _, _ := newFakeProposer()
			p.inflight = 1
			for _, size := range tt.sizes {
				p.queue = append(p.queue, &proposal{cmd: make([]byte, size)})
			}
			var got []int
			for b := p.next(); b != nil; b = p.next() {
				got = append(got, len(b))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || p.inflight != 0 {
				t.Fatalf("batches %v (senders %d), want %v", got, p.inflight, tt.want)
			}
		})
	}
}

func repeat(n, size int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = size
	}
	return s
}

// gateSM is a kvSM whose Apply of a "gate=..." command waits until gate is
// closed, holding up every later entry.
type gateSM struct {
	*kvSM
	gate chan struct{}
}

func newGateKV() *gateSM { return &gateSM{kvSM: newKV(), gate: make(chan struct{})} }

func (s *gateSM) Apply(index uint64, cmd []byte) any {
	if bytes.HasPrefix(cmd, []byte("gate=")) {
		<-s.gate
	}
	return s.kvSM.Apply(index, cmd)
}

// startTrio starts group id on three nodes with the given state machines;
// node 0 bootstraps it and leads.
func startTrio(t *testing.T, id uint32, sms [3]StateMachine) ([]*Node, []*Group) {
	t.Helper()
	var nodes []*Node
	var groups []*Group
	for i, sm := range sms {
		n := newTestNode(t, fmt.Sprintf("n%d", i), t.TempDir())
		nodes = append(nodes, n)
		groups = append(groups, startGroup(t, n, GroupConfig{ID: id, Bootstrap: i == 0}, sm))
		if i == 0 {
			waitLeader(t, groups[0])
		}
	}
	for _, n := range nodes[1:] {
		if err := groups[0].AddVoter(testCtx(t), n.ID(), n.Addr()); err != nil {
			t.Fatalf("AddVoter(%s): %v", n.ID(), err)
		}
	}
	return nodes, groups
}

// fillSenders proposes "gate=open" for every sender slot of leader g, whose
// state machine holds gate entries: the slots stay taken until the gate opens.
func fillSenders(t *testing.T, g *Group) <-chan proposeOutcome {
	t.Helper()
	out := make(chan proposeOutcome, maxInflightEntries)
	for i := range maxInflightEntries {
		go func() {
			cmd := "gate=open"
			res, err := g.Propose(testCtx(t), []byte(cmd))
			out <- proposeOutcome{cmd, res, err}
		}()
		waitFor(t, "a sender slot taken", func() bool { return g.prop.senders() == i+1 })
	}
	return out
}

// concurrentWrites runs callers goroutines, each proposing perCaller writes
// of its own key in order, and checks that every call got its own result
// (the caller's previous value). It waits until every caller's first
// proposal queues behind the gate entries before opening the gate.
func concurrentWrites(t *testing.T, g *Group, gate chan struct{}, callers, perCaller int) map[string]string {
	t.Helper()
	gates := fillSenders(t, g)
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			key := fmt.Sprintf("c%d", c)
			for i := range perCaller {
				res, err := g.Propose(testCtx(t), fmt.Appendf(nil, "%s=%d", key, i))
				if err != nil {
					t.Errorf("caller %d write %d: %v", c, i, err)
					return
				}
				if want := prevOf(i); res.(kvResult).Prev != want {
					t.Errorf("caller %d write %d: previous value %q, want %q", c, i, res.(kvResult).Prev, want)
				}
			}
		})
	}
	waitFor(t, "every caller to queue", func() bool { return g.prop.queued() == callers })
	close(gate)
	wg.Wait()
	for range maxInflightEntries {
		if o := <-gates; o.err != nil {
			t.Fatalf("propose(%q): %v", o.cmd, o.err)
		}
	}
	want := map[string]string{"gate": "open"}
	for c := range callers {
		want[fmt.Sprintf("c%d", c)] = fmt.Sprint(perCaller - 1)
	}
	return want
}

func prevOf(i int) string {
	if i == 0 {
		return ""
	}
	return fmt.Sprint(i - 1)
}

func TestConcurrentProposesShareEntries(t *testing.T) {
	const callers, perCaller = 16, 10
	tests := []struct {
		name  string
		start func(t *testing.T, leader *gateSM) (*Group, func(want map[string]string))
	}{
		{"one node", func(t *testing.T, leader *gateSM) (*Group, func(map[string]string)) {
			dir := t.TempDir()
			n := newTestNode(t, "n1", dir)
			g := startGroup(t, n, GroupConfig{ID: 1, Bootstrap: true}, leader)
			waitLeader(t, g)
			// A restart replays the log, envelopes included.
			return g, func(want map[string]string) {
				if err := n.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				sm := newKV()
				g := startGroup(t, newTestNode(t, "n1", dir), GroupConfig{ID: 1}, sm)
				waitLeader(t, g)
				if err := g.ReadIndex(testCtx(t)); err != nil {
					t.Fatalf("ReadIndex after restart: %v", err)
				}
				if got := sm.snapshotData(); !maps.Equal(got, want) {
					t.Fatalf("state after restart %v, want %v", got, want)
				}
			}
		}},
		{"three nodes", func(t *testing.T, leader *gateSM) (*Group, func(map[string]string)) {
			followers := [2]*kvSM{newKV(), newKV()}
			_, groups := startTrio(t, 1, [3]StateMachine{leader, followers[0], followers[1]})
			// Every replica applies the same envelopes to the same state.
			return groups[0], func(want map[string]string) {
				for i, sm := range followers {
					waitFor(t, fmt.Sprintf("follower %d to converge", i), func() bool {
						return maps.Equal(sm.snapshotData(), want)
					})
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sm := newGateKV()
			g, check := tt.start(t, sm)
			before := g.Raft().LastIndex()
			want := concurrentWrites(t, g, sm.gate, callers, perCaller)
			entries := g.Raft().LastIndex() - before
			commands := uint64(maxInflightEntries + callers*perCaller)
			t.Logf("%d commands in %d entries", commands, entries)
			if entries >= commands {
				t.Fatalf("%d commands took %d entries; want fewer entries than commands", commands, entries)
			}
			if got := sm.snapshotData(); !maps.Equal(got, want) {
				t.Fatalf("leader state %v, want %v", got, want)
			}
			check(want)
		})
	}
}

func TestLeadershipLostMidBatch(t *testing.T) {
	sm := newGateKV()
	nodes, groups := startTrio(t, 1, [3]StateMachine{sm, newKV(), newKV()})
	g := groups[0]
	gates := fillSenders(t, g)
	const waiters = 8
	out := make(chan proposeOutcome, waiters)
	for _, cmd := range keyCmds(waiters) {
		go func() {
			res, err := g.Propose(testCtx(t), []byte(cmd))
			out <- proposeOutcome{cmd, res, err}
		}()
	}
	waitFor(t, "every waiter to queue", func() bool { return g.prop.queued() == waiters })
	// With the followers gone the batch cannot commit: the leader steps down
	// with it appended (outcome unknown) or before it is sent (not leader).
	for _, n := range nodes[1:] {
		if err := n.Close(); err != nil {
			t.Fatalf("Close %s: %v", n.ID(), err)
		}
	}
	close(sm.gate)
	for range maxInflightEntries {
		if o := <-gates; o.err != nil {
			t.Fatalf("gate entry committed before the loss failed: %v", o.err)
		}
	}
	var first error
	for range waiters {
		o := <-out
		if o.err == nil {
			t.Fatalf("propose(%q) succeeded without a quorum: %#v", o.cmd, o.res)
		}
		if !errors.Is(o.err, ErrTimeout) && !errors.Is(o.err, ErrNotLeader) {
			t.Fatalf("propose(%q): %v, want ErrTimeout or ErrNotLeader", o.cmd, o.err)
		}
		if first == nil {
			first = o.err
			t.Logf("every waiter: %v", o.err)
		}
		if errors.Is(o.err, ErrTimeout) != errors.Is(first, ErrTimeout) {
			t.Fatalf("waiters of one batch got different errors: %v and %v", first, o.err)
		}
	}
}

func TestPlainEntryFromOldLogApplies(t *testing.T) {
	sm := newKV()
	n := newTestNode(t, "n1", t.TempDir())
	g := startGroup(t, n, GroupConfig{ID: 1, Bootstrap: true}, sm)
	waitLeader(t, g)
	// A command appended the way every entry was before group commit.
	f := g.Raft().Apply([]byte("old=1"), time.Second)
	if err := f.Error(); err != nil || f.Response() != (kvResult{Index: f.Index()}) {
		t.Fatalf("raw Apply: %#v, %v", f.Response(), err)
	}
	if res := propose(t, g, "old=2"); res.Prev != "1" {
		t.Fatalf("Propose after the plain entry: %+v", res)
	}
}
