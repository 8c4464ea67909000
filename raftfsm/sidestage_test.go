package raftfsm

import (
	"testing"
	"time"
)

// TestSideStageWait checks that wait returns only after the stage's
// goroutine finished, having seen what it wrote (the race detector checks
// the ordering), whether the stage ends at once, while wait spins or after
// it gave up spinning, and when other reads make it block at once.
func TestSideStageWait(t *testing.T) {
	var never sideStage
	never.wait() // never added: returns at once

	for _, running := range []int32{0, 2} {
		readsRunning.Add(running)
		for _, after := range []time.Duration{0, 50 * time.Microsecond, 3 * awaitSpin} {
			var st sideStage
			result := 0
			st.add()
			go func() {
				time.Sleep(after)
				result = 42
				st.finish()
			}()
			st.wait()
			if result != 42 || !st.done.Load() {
				t.Fatalf("reads running %d, stage of %v: wait returned before the stage finished", running, after)
			}
		}
		readsRunning.Add(-running)
	}
}
