package raftfsm

import (
	"errors"
	"testing"
)

// A restore whose stop signal has closed ends with ErrRestoreStopped (not a
// bad snapshot) and leaves the state as it was; once cleared, the same
// snapshot restores whole. Both ways of reading: as a stream and whole.
func TestRestoreStops(t *testing.T) {
	src := goldenFSM(t)
	b := snapshotBytes(t, src)
	for i := range restoreReaders(b) {
		f := New(src.Dim())
		empty := f.StateHash()
		done := make(chan struct{})
		close(done)
		f.StopRestoresOn(done)
		err := f.Restore(restoreReaders(b)[i])
		if !errors.Is(err, ErrRestoreStopped) || errors.Is(err, ErrSnapshot) {
			t.Errorf("reader %d: stopped restore: %v, want ErrRestoreStopped alone", i, err)
		}
		if f.StateHash() != empty {
			t.Errorf("reader %d: a stopped restore changed the state", i)
		}
		f.StopRestoresOn(nil)
		if err := f.Restore(restoreReaders(b)[i]); err != nil {
			t.Fatalf("reader %d: restore after the stop was cleared: %v", i, err)
		}
		if f.StateHash() != src.StateHash() {
			t.Errorf("reader %d: restored state differs", i)
		}
	}
}
