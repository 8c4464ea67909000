package raftfsm

import "io"

// stopSignal is a channel whose close stops restores.
type stopSignal struct{ done <-chan struct{} }

// StopRestoresOn makes a Restore in progress, or started later, end with
// ErrRestoreStopped once done closes, leaving the state as it was: a node
// restoring a large snapshot at start (~30 s at a million atoms) then stops
// at once rather than after the restore. A nil done clears it; the caller
// clears it once the start is over, so that the snapshots a leader sends
// later are restored whole.
func (f *FSM) StopRestoresOn(done <-chan struct{}) {
	if done == nil {
		f.restoreStop.Store(nil)
		return
	}
	f.restoreStop.Store(&stopSignal{done: done})
}

// stoppableReader fails its reads with ErrRestoreStopped once done is
// closed. The restore reads the snapshot a window (4 MiB) at a time, so it
// stops within one window's decoding.
type stoppableReader struct {
	r    io.Reader
	done <-chan struct{}
}

func (s stoppableReader) Read(p []byte) (int, error) {
	select {
	case <-s.done:
		return 0, ErrRestoreStopped
	default:
		return s.r.Read(p)
	}
}
