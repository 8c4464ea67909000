package shard

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
)

// StateMachine is what a group replicates. Apply is deterministic and called
// in log order, never concurrently with itself, Snapshot or Restore; index is
// the log index of the entry carrying cmd, shared by the commands of one
// envelope (group commit). Snapshot is called with no Apply running and must
// be fast (capture state); the returned write function runs later,
// concurrently with Apply, and must not touch live state. Restore discards
// all state and replaces it with the snapshot's; its reader may have a
// Size() int64 method telling how many bytes it holds.
type StateMachine interface {
	Apply(index uint64, cmd []byte) any
	Snapshot() (func(w io.Writer) error, error)
	Restore(r io.Reader) error
}

// Snapshot framing: magic, version, index of the last command applied.
const snapshotHeaderLen = 13

var (
	snapshotMagic   = [4]byte{'h', 'b', 's', 'n'}
	snapshotVersion = byte(1)
	errBadSnapshot  = errors.New("shard: bad snapshot header")
)

// fsmAdapter adapts a StateMachine to raft.FSM and tracks the index of the
// last command the StateMachine reflects, for ReadIndex.
type fsmAdapter struct {
	sm      StateMachine
	group   string // metrics label
	applyD  prometheus.Observer
	lastCmd atomic.Uint64
	// sinceSnap counts the command bytes applied since the last snapshot
	// or restore (Group.snapshotBySize).
	sinceSnap atomic.Int64

	mu      sync.Mutex
	waiters map[chan struct{}]uint64 // closed once lastCmd reaches the index
	nwait   atomic.Int64
}

var _ raft.FSM = (*fsmAdapter)(nil)

func newFSMAdapter(sm StateMachine, group string) *fsmAdapter {
	return &fsmAdapter{
		sm: sm, group: group, applyD: applyDuration.WithLabelValues(group),
		waiters: make(map[chan struct{}]uint64),
	}
}

func (a *fsmAdapter) applied() uint64 { return a.lastCmd.Load() }

// Apply is called by raft for command entries only. A plain entry is one
// command; an envelope is applied command by command, in order, at the
// entry's index, and answers with envelopeResults. An undecodable envelope
// is a bug and panics.
func (a *fsmAdapter) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	start := time.Now()
	a.sinceSnap.Add(int64(len(l.Data)))
	var res any
	if isEnvelope(l.Data) {
		res = a.applyEnvelope(l.Index, l.Data)
	} else {
		res = a.sm.Apply(l.Index, l.Data)
	}
	a.applyD.Observe(time.Since(start).Seconds())
	a.setApplied(l.Index)
	return res
}

func (a *fsmAdapter) applyEnvelope(index uint64, data []byte) envelopeResults {
	cmds, err := decodeEnvelope(data)
	if err != nil {
		panic(fmt.Sprintf("shard: group %s: cannot apply log entry %d: %v", a.group, index, err))
	}
	if all, ok := a.sm.(EntryApplier); ok && len(cmds) > 1 {
		return envelopeResults(all.ApplyAll(index, cmds))
	}
	res := make(envelopeResults, len(cmds))
	for i, cmd := range cmds {
		res[i] = a.sm.Apply(index, cmd)
	}
	return res
}

// EntryApplier is a StateMachine that can apply an envelope's commands
// together: ApplyAll returns, in order, what Apply would return for each
// command applied one by one, and leaves the same state.
type EntryApplier interface {
	ApplyAll(index uint64, cmds [][]byte) []any
}

func (a *fsmAdapter) Snapshot() (raft.FSMSnapshot, error) {
	a.sinceSnap.Store(0)
	write, err := a.sm.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("cannot snapshot state machine: %w", err)
	}
	return &fsmSnapshot{lastCmd: a.lastCmd.Load(), write: write, group: a.group}, nil
}

func (a *fsmAdapter) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	a.sinceSnap.Store(0)
	lastCmd, err := readSnapshotHeader(rc)
	if err != nil {
		return err
	}
	var r io.Reader = rc
	if n, ok := sizeOf(rc); ok && n > snapshotHeaderLen {
		r = sizedReadCloser{rc, n - snapshotHeaderLen} // the state's bytes
	}
	if err := a.sm.Restore(r); err != nil {
		return fmt.Errorf("cannot restore state machine: %w", err)
	}
	a.setApplied(lastCmd)
	return nil
}

func (a *fsmAdapter) setApplied(idx uint64) {
	a.lastCmd.Store(idx)
	if a.nwait.Load() == 0 {
		return
	}
	a.mu.Lock()
	for ch, want := range a.waiters {
		if want <= idx {
			close(ch)
			delete(a.waiters, ch)
		}
	}
	a.nwait.Store(int64(len(a.waiters)))
	a.mu.Unlock()
}

// waitApplied blocks until the StateMachine reflects the command at idx.
func (a *fsmAdapter) waitApplied(ctx context.Context, idx uint64, done <-chan struct{}) error {
	if a.lastCmd.Load() >= idx {
		return nil
	}
	ch := make(chan struct{})
	a.mu.Lock()
	a.waiters[ch] = idx
	a.nwait.Store(int64(len(a.waiters)))
	a.mu.Unlock()
	if a.lastCmd.Load() >= idx { // applied before the waiter was visible
		a.dropWaiter(ch)
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		a.dropWaiter(ch)
		return ctxError(ctx)
	case <-done:
		a.dropWaiter(ch)
		return ErrShutdown
	}
}

func (a *fsmAdapter) dropWaiter(ch chan struct{}) {
	a.mu.Lock()
	delete(a.waiters, ch)
	a.nwait.Store(int64(len(a.waiters)))
	a.mu.Unlock()
}

// fsmSnapshot writes the snapshot header and then the StateMachine's bytes.
type fsmSnapshot struct {
	lastCmd uint64
	write   func(w io.Writer) error
	group   string
}

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	cw := &countingWriter{w: sink}
	err := writeSnapshotHeader(cw, s.lastCmd)
	if err == nil {
		err = s.write(cw)
	}
	if err != nil {
		sink.Cancel()
		snapshotsTotal.WithLabelValues(s.group, "error").Inc()
		return fmt.Errorf("cannot persist snapshot: %w", err)
	}
	snapshotsTotal.WithLabelValues(s.group, "ok").Inc()
	snapshotBytes.WithLabelValues(s.group).Set(float64(cw.n))
	return sink.Close()
}

func (s *fsmSnapshot) Release() {}

func writeSnapshotHeader(w io.Writer, lastCmd uint64) error {
	var b [snapshotHeaderLen]byte
	copy(b[:], snapshotMagic[:])
	b[4] = snapshotVersion
	binary.BigEndian.PutUint64(b[5:], lastCmd)
	_, err := w.Write(b[:])
	return err
}

// sizedStore is the file snapshot store in dir whose readers tell their
// snapshot's size (from its metadata), which raft's own do not, and check
// its CRC as they are read rather than in a pass of their own before
// (openVerified).
type sizedStore struct{ cleanStore }

func (s sizedStore) Open(id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	meta, rc, err := openVerified(filepath.Join(s.dir, snapDir), id)
	if err != nil {
		return nil, nil, err
	}
	return meta, sizedReadCloser{rc, meta.Size}, nil
}

// sizeOf is the size a sizedStore's reader tells, through the wrappers
// raft puts around it (its restore counts the bytes read).
func sizeOf(rc io.ReadCloser) (int64, bool) {
	for {
		if s, ok := rc.(interface{ Size() int64 }); ok {
			return s.Size(), true
		}
		w, ok := rc.(interface{ WrappedReadCloser() io.ReadCloser })
		if !ok {
			return 0, false
		}
		rc = w.WrappedReadCloser()
	}
}

// sizedReadCloser tells how many bytes it holds, so the state machine can
// decode its snapshot as it reads it (raftfsm.FSM.Restore).
type sizedReadCloser struct {
	io.ReadCloser
	n int64
}

func (r sizedReadCloser) Size() int64 { return r.n }

func readSnapshotHeader(r io.Reader) (lastCmd uint64, err error) {
	var b [snapshotHeaderLen]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, fmt.Errorf("cannot read snapshot header: %w", err)
	}
	if [4]byte(b[:4]) != snapshotMagic || b[4] != snapshotVersion {
		return 0, errBadSnapshot
	}
	return binary.BigEndian.Uint64(b[5:]), nil
}
