package raftfsm

import (
	"bytes"
	"testing"
)

// BenchmarkSnapshot freezes, writes and restores a snapshot of a tenant of
// 100k atoms of hebb bench's texts with their within-atom edges, over 20
// domains: what holds applies up, the work of a snapshot beside them, and
// a restart.
//
//	go test -run '^$' -bench Snapshot -benchtime 3x ./raftfsm/
func BenchmarkSnapshot(b *testing.B) {
	f := builtState(b, 100_000, 20, true)
	snap := snapshotBytes(b, f)
	b.Run("freeze", func(b *testing.B) { // what holds the applies up
		for b.Loop() {
			if _, err := f.Snapshot(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write", func(b *testing.B) {
		b.SetBytes(int64(len(snap)))
		for b.Loop() {
			snapshotBytes(b, f)
		}
	})
	b.Run("restore", func(b *testing.B) {
		b.SetBytes(int64(len(snap)))
		for b.Loop() {
			if err := New(benchDim).Restore(bytes.NewReader(snap)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
