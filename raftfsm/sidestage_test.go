package raftfsm

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestSideStageWait checks that wait returns only after the stage ran,
// having seen what it wrote (the race detector checks the ordering):
// run by another goroutine that ends at once, while wait spins or after it
// gave up spinning, and when other reads make it block at once.
func TestSideStageWait(t *testing.T) {
	// A stage never added: wait returns at once, without spinning (the
	// fastest of three calls, so that a stalled one cannot fail the test).
	var never sideStage
	fastest := time.Hour
	for range 3 {
		start := time.Now()
		never.wait()
		never.settle()
		fastest = min(fastest, time.Since(start))
	}
	if fastest >= awaitSpin {
		t.Fatalf("waiting for a stage never added took %v", fastest)
	}

	for _, running := range []int32{0, 2} {
		readsRunning.Add(running)
		for _, after := range []time.Duration{0, 50 * time.Microsecond, 3 * awaitSpin} {
			var st sideStage
			result, runs := 0, 0
			st.add(func() {
				time.Sleep(after)
				result = 42
				runs++
			})
			go st.run()
			for !st.claimed.Load() { // the other goroutine runs it, not wait
				time.Sleep(10 * time.Microsecond)
			}
			st.wait()
			if result != 42 || runs != 1 || st.running.Load() {
				t.Fatalf("reads running %d, stage of %v: wait returned before the stage finished (runs %d)", running, after, runs)
			}
		}
		readsRunning.Add(-running)
	}
}

// TestSideStageClaim checks that a stage runs once whoever claims it: a
// lone read's waiter runs one nobody started, on its own goroutine, and a
// late helper then does nothing, while with other reads running the
// waiter leaves it to the helper; a stage nobody needed is settled without
// running, and settle waits for one another goroutine runs.
func TestSideStageClaim(t *testing.T) {
	var st sideStage
	var runs atomic.Int32
	st.add(func() { runs.Add(1) })
	st.wait() // no helper started: the waiter runs it
	if runs.Load() != 1 || st.running.Load() {
		t.Fatalf("wait with no helper: %d runs, running %v", runs.Load(), st.running.Load())
	}
	if st.run() || runs.Load() != 1 {
		t.Fatal("a late helper ran the stage again")
	}
	st.settle()

	var unneeded sideStage
	unneeded.add(func() { runs.Add(1) })
	unneeded.settle()
	if runs.Load() != 1 || unneeded.running.Load() || unneeded.run() {
		t.Fatal("settle ran a stage no one started, or left it running")
	}

	var slow sideStage
	done := false
	slow.add(func() { time.Sleep(2 * time.Millisecond); done = true })
	go slow.run()
	for !slow.claimed.Load() {
		time.Sleep(10 * time.Microsecond)
	}
	slow.settle()
	if !done {
		t.Fatal("settle returned while another goroutine ran the stage")
	}

	// With other reads running the waiter leaves the stage to its helper,
	// however late.
	readsRunning.Add(2)
	var late sideStage
	late.add(func() {})
	helperRan := make(chan bool, 1)
	go func() {
		time.Sleep(2 * time.Millisecond)
		helperRan <- late.run()
	}()
	late.wait()
	readsRunning.Add(-2)
	if !<-helperRan {
		t.Fatal("with other reads running, the waiter ran the stage of a late helper")
	}

	// Helper and waiter racing: exactly one runs it.
	for range 200 {
		var race sideStage
		var n atomic.Int32
		race.add(func() { n.Add(1) })
		go race.run()
		race.wait()
		race.settle()
		if n.Load() != 1 {
			t.Fatalf("raced stage ran %d times", n.Load())
		}
	}
}
