package shard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
)

// Limits of group commit: at most maxInflightEntries entries of one group's
// proposer are between raft.Apply and their result at a time; commands
// proposed meanwhile queue and leave together, at most maxBatchCommands
// commands or maxBatchBytes bytes of commands per entry (a larger command
// travels alone). One entry in flight gave the highest write rate over HTTP
// (32 writers on 2 cores: ~12 commands per entry; 2 or 4 in flight sent
// smaller entries and did worse: 3.0-3.4k writes/s against 3.4-4.2k).
//
// A command of largeCommand bytes or more (a batched write of a few hundred
// items) may start a second entry beside the one in flight: its log write
// (two fsyncs of up to megabytes) then overlaps the apply of the entry
// before it, where with one in flight the group's apply waited for it, a
// fifth of the time under 500-item batches.
const (
	maxInflightEntries = 1
	maxInflightLarge   = 2
	largeCommand       = 256 << 10
	maxBatchCommands   = 256
	maxBatchBytes      = 4 << 20
)

// proposer coalesces the concurrent proposals of one group into Raft
// entries. A proposal made while fewer than maxInflightEntries entries are in
// flight is sent at once, alone and unwrapped, exactly as a plain raft.Apply:
// a lone caller never waits for a timer or for anyone else. Otherwise it
// queues; when an entry's result arrives, its sender takes the queue (up to
// the batch limits) into the next entry. The queue is only ever non-empty
// while a sender runs, and a sender only stops once the queue is empty.
type proposer struct {
	apply func(cmd []byte, timeout time.Duration) raft.ApplyFuture
	done  <-chan struct{}     // closed when the group shuts down
	sizes prometheus.Observer // commands per entry sent

	mu       sync.Mutex
	queue    []*proposal
	inflight int // senders running
}

// proposal is one Propose call waiting for its command's result.
type proposal struct {
	ctx  context.Context // has a deadline
	cmd  []byte
	done chan outcome // buffered: the sender never blocks
}

type outcome struct {
	res any
	err error
}

// envelopeResults is the apply result of an envelope: one result per
// command, in order.
type envelopeResults []any

func newProposer(apply func([]byte, time.Duration) raft.ApplyFuture, done <-chan struct{},
	sizes prometheus.Observer) *proposer {
	return &proposer{apply: apply, done: done, sizes: sizes}
}

// propose replicates cmd and returns its StateMachine result. ctx has a
// deadline. Errors are unwrapped sentinels of the package (see Group.Propose).
func (p *proposer) propose(ctx context.Context, cmd []byte) (any, error) {
	pr := &proposal{ctx: ctx, cmd: cmd, done: make(chan outcome, 1)}
	p.mu.Lock()
	if p.inflight < maxInflightEntries || len(cmd) >= largeCommand && p.inflight < maxInflightLarge {
		p.inflight++
		p.mu.Unlock()
		go p.run([]*proposal{pr})
	} else {
		p.queue = append(p.queue, pr)
		p.mu.Unlock()
	}
	select {
	case o := <-pr.done:
		return o.res, o.err
	case <-ctx.Done():
		return nil, ctxError(ctx)
	case <-p.done:
		return nil, ErrShutdown
	}
}

// run sends batch, then the queue, one entry at a time, until the queue is
// empty.
func (p *proposer) run(batch []*proposal) {
	for batch != nil {
		p.send(batch)
		batch = p.next()
	}
}

// next takes the next batch off the queue, or retires the sender (nil) when
// the queue is empty, or when it is a second sender and the next command
// is small (another sender is running, and will take the queue).
func (p *proposer) next() []*proposal {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 {
		p.inflight--
		p.queue = nil // let a large backlog's array go
		return nil
	}
	if p.inflight > maxInflightEntries && len(p.queue[0].cmd) < largeCommand {
		p.inflight-- // small commands wait for the other sender: one entry in flight
		return nil
	}
	n, size := 0, 0
	for n < len(p.queue) && n < maxBatchCommands {
		size += len(p.queue[n].cmd)
		if n > 0 && size > maxBatchBytes {
			break
		}
		n++
	}
	batch := make([]*proposal, n)
	copy(batch, p.queue)
	clear(p.queue[:n])
	p.queue = p.queue[n:]
	return batch
}

// send proposes the live proposals of batch as one entry and hands each its
// own result or the entry's error. A proposal whose caller has given up
// (context done) is dropped unsent.
func (p *proposer) send(batch []*proposal) {
	live := batch[:0]
	var deadline time.Time
	for _, pr := range batch {
		if pr.ctx.Err() != nil {
			continue
		}
		live = append(live, pr)
		if dl, _ := pr.ctx.Deadline(); dl.After(deadline) {
			deadline = dl
		}
	}
	if len(live) == 0 {
		return
	}
	cmds := make([][]byte, len(live))
	for i, pr := range live {
		cmds[i] = pr.cmd
	}
	data, wrapped := cmds[0], needsEnvelope(cmds)
	if wrapped {
		data = encodeEnvelope(cmds)
	}
	p.sizes.Observe(float64(len(live)))
	f := p.apply(data, max(time.Until(deadline), time.Millisecond))
	if err := proposeError(f.Error()); err != nil {
		for _, pr := range live {
			pr.done <- outcome{err: err}
		}
		return
	}
	if !wrapped {
		live[0].done <- outcome{res: f.Response()}
		return
	}
	results, ok := f.Response().(envelopeResults)
	if !ok || len(results) != len(live) {
		panic(fmt.Sprintf("shard: envelope of %d commands answered with %T", len(live), f.Response()))
	}
	for i, pr := range live {
		pr.done <- outcome{res: results[i]}
	}
}

// proposeError maps the error of an Apply future onto the package's
// sentinels.
func proposeError(err error) error {
	if errors.Is(err, raft.ErrLeadershipLost) {
		// The entry is in the log and the next leader may commit it: the
		// outcome is open, and a retry elsewhere could apply it twice.
		return fmt.Errorf("%w: outcome unknown: %w", ErrTimeout, raft.ErrLeadershipLost)
	}
	return raftError(err)
}
