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
	// A stage never added: wait returns at once, without spinning (the
	// fastest of three calls, so that a stalled one cannot fail the test).
	var never sideStage
	fastest := time.Hour
	for range 3 {
		start := time.Now()
		never.wait()
		fastest = min(fastest, time.Since(start))
	}
	if fastest >= awaitSpin {
		t.Fatalf("waiting for a stage never added took %v", fastest)
	}

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
			if result != 42 || st.running.Load() {
				t.Fatalf("reads running %d, stage of %v: wait returned before the stage finished", running, after)
			}
		}
		readsRunning.Add(-running)
	}
}
