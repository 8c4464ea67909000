package shard

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// memSink is a raft.SnapshotSink over a buffer.
type memSink struct {
	bytes.Buffer
	closed, canceled bool
}

func (s *memSink) ID() string            { return "mem" }
func (s *memSink) Close() error          { s.closed = true; return nil }
func (s *memSink) Cancel() error         { s.canceled = true; return nil }
func (s *memSink) Reader() io.ReadCloser { return io.NopCloser(bytes.NewReader(s.Bytes())) }

func TestSnapshotRoundTrip(t *testing.T) {
	src := newFSMAdapter(newKV(), "test")
	for i, cmd := range []string{"a=1", "b=2", "a=3"} {
		src.Apply(&raft.Log{Index: uint64(10 + i), Type: raft.LogCommand, Data: []byte(cmd)})
	}
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	src.Apply(&raft.Log{Index: 13, Type: raft.LogCommand, Data: []byte("c=4")}) // not in the snapshot
	var sink memSink
	if err := snap.Persist(&sink); err != nil || !sink.closed {
		t.Fatalf("Persist: %v (closed %v)", err, sink.closed)
	}

	sm := newKV()
	dst := newFSMAdapter(sm, "test")
	if err := dst.Restore(sink.Reader()); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if got, want := sm.snapshotData(), map[string]string{"a": "3", "b": "2"}; !maps.Equal(got, want) {
		t.Fatalf("restored %v, want %v", got, want)
	}
	if got := dst.applied(); got != 12 {
		t.Fatalf("applied after restore = %d, want 12", got)
	}
}

func TestRestoreRejectsBadHeader(t *testing.T) {
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"short", []byte("hbsn")},
		{"bad magic", []byte("xxxx\x01\x00\x00\x00\x00\x00\x00\x00\x01{}")},
		{"future version", []byte("hbsn\x09\x00\x00\x00\x00\x00\x00\x00\x01{}")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newFSMAdapter(newKV(), "test")
			if err := a.Restore(io.NopCloser(bytes.NewReader(tt.data))); err == nil {
				t.Fatalf("Restore accepted %q", tt.data)
			}
		})
	}
}

func TestPersistCancelsOnWriteError(t *testing.T) {
	boom := errors.New("boom")
	snap := &fsmSnapshot{write: func(io.Writer) error { return boom }}
	var sink memSink
	if err := snap.Persist(&sink); !errors.Is(err, boom) || !sink.canceled || sink.closed {
		t.Fatalf("Persist: %v, canceled %v, closed %v", err, sink.canceled, sink.closed)
	}
}

func TestWaitApplied(t *testing.T) {
	a := newFSMAdapter(newKV(), "test")
	a.Apply(&raft.Log{Index: 5, Type: raft.LogCommand, Data: []byte("k=v")})
	if err := a.waitApplied(context.Background(), 5, nil); err != nil {
		t.Fatalf("waitApplied(reached): %v", err)
	}

	res := make(chan error, 1)
	go func() { res <- a.waitApplied(context.Background(), 7, nil) }()
	a.Apply(&raft.Log{Index: 6, Type: raft.LogCommand, Data: []byte("k=w")})
	a.Apply(&raft.Log{Index: 7, Type: raft.LogCommand, Data: []byte("k=x")})
	if err := <-res; err != nil {
		t.Fatalf("waitApplied(later): %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := a.waitApplied(ctx, 100, nil); !errors.Is(err, ErrTimeout) {
		t.Fatalf("waitApplied(deadline): %v, want ErrTimeout", err)
	}
	done := make(chan struct{})
	close(done)
	if err := a.waitApplied(context.Background(), 100, done); !errors.Is(err, ErrShutdown) {
		t.Fatalf("waitApplied(shutdown): %v, want ErrShutdown", err)
	}
	if n := a.nwait.Load(); n != 0 {
		t.Fatalf("%d waiters left behind", n)
	}
}

func TestLastCommandUpTo(t *testing.T) {
	// Log: 3 cmd, 4 noop, 5 cmd, 6 barrier, 7 configuration, 8 cmd, 9 noop;
	// entries 1-2 compacted away.
	types := map[uint64]raft.LogType{
		3: raft.LogCommand, 4: raft.LogNoop, 5: raft.LogCommand, 6: raft.LogBarrier,
		7: raft.LogConfiguration, 8: raft.LogCommand, 9: raft.LogNoop,
	}
	store := raft.NewInmemStore()
	for idx := uint64(3); idx <= 9; idx++ {
		if err := store.StoreLog(&raft.Log{Index: idx, Term: 1, Type: types[idx]}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name        string
		applied, ci uint64
		want        uint64
	}{
		{"caught up", 8, 9, 0},
		{"command at ci", 5, 8, 8},
		{"only non-commands pending", 5, 7, 0},
		{"last command below ci", 3, 7, 5},
		{"compacted entries are covered", 0, 2, 0},
		{"across the compaction point", 0, 4, 3},
		{"nothing committed", 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &Group{logs: store, fsm: newFSMAdapter(newKV(), "test")}
			g.fsm.lastCmd.Store(tt.applied)
			got, err := g.lastCommandUpTo(tt.ci)
			if err != nil || got != tt.want {
				t.Fatalf("lastCommandUpTo(%d) with applied %d = %d, %v; want %d", tt.ci, tt.applied, got, err, tt.want)
			}
		})
	}
}

func TestApplyPlainAndEnvelopeEntries(t *testing.T) {
	sm := newKV()
	a := newFSMAdapter(sm, "test")
	// A plain entry, as every entry written before group commit is.
	if got := a.Apply(&raft.Log{Index: 10, Type: raft.LogCommand, Data: []byte("a=1")}); got != (kvResult{Index: 10}) {
		t.Fatalf("plain entry: %#v", got)
	}
	env := encodeEnvelope([][]byte{[]byte("a=2"), []byte("b=3"), []byte("a=4")})
	got := a.Apply(&raft.Log{Index: 11, Type: raft.LogCommand, Data: env})
	want := envelopeResults{kvResult{11, "1"}, kvResult{11, ""}, kvResult{11, "2"}}
	if res, ok := got.(envelopeResults); !ok || !slices.Equal(res, want) {
		t.Fatalf("envelope: %#v, want %#v", got, want)
	}
	if a.applied() != 11 {
		t.Fatalf("applied = %d, want 11", a.applied())
	}
	if got, want := sm.snapshotData(), map[string]string{"a": "4", "b": "3"}; !maps.Equal(got, want) {
		t.Fatalf("state %v, want %v", got, want)
	}
}

func TestApplyMalformedEnvelopePanics(t *testing.T) {
	a := newFSMAdapter(newKV(), "test")
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "cannot apply log entry 7") || !strings.Contains(msg, errBadEnvelope.Error()) {
			t.Fatalf("panic %q, want one naming the entry and the bad envelope", msg)
		}
		if a.applied() != 0 {
			t.Fatalf("malformed entry counted as applied")
		}
	}()
	a.Apply(&raft.Log{Index: 7, Type: raft.LogCommand, Data: []byte{envelopeMarker, envelopeVersion, 2, 1, 'x'}})
}
