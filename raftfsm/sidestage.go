package raftfsm

import (
	"sync"
	"sync/atomic"
	"time"
)

// awaitSpin is how long a read yields, waiting for a stage running beside
// it, before it blocks: about the longest such a stage takes at 100k atoms.
const awaitSpin = 500 * time.Microsecond

// sideStage is a stage of a read that one goroutine runs beside the
// ranking (search.plan), and its completion.
//
// A read that blocks on a stage still running on the other core parks its
// goroutine; the stage's end then makes it runnable on that core's queue,
// behind the goroutine that ran the stage and goes on to the next one, and
// an idle core must be woken to take it: on a VM, tens of microseconds on
// average and milliseconds at the tail (an execution trace of a 100k-atom
// search benchmark: 62 µs a search spent runnable after the query
// concepts' count finished). So wait yields first, as fanoutThen does,
// when this read is the only one in the process: yielding goroutines go to
// the scheduler's global queue, which a busy core visits rarely, and with
// four clients searching, spinning reads served 9% fewer searches.
//
// A stage runs once, on whichever goroutine claims it first: the helper or
// goroutine it was handed to, or the read itself when it needs the
// stage's result before anyone else took it and no other read is running
// (wait). A lone read whose helper is late (its core busy, or its vCPU
// descheduled by the host) then runs the stage alone instead of waiting
// for the helper to be scheduled.
type sideStage struct {
	wg      sync.WaitGroup
	running atomic.Bool
	claimed atomic.Bool
	body    func()
}

// add counts the stage, whose work is body, before it starts.
func (st *sideStage) add(body func()) {
	st.body = body
	st.running.Store(true)
	st.wg.Add(1)
}

// run runs the stage unless it was never added or another goroutine
// claimed it; it reports whether it ran it.
func (st *sideStage) run() bool {
	if st.body == nil || !st.claimed.CompareAndSwap(false, true) {
		return false
	}
	defer st.finish()
	st.body()
	return true
}

// finish marks the stage done.
func (st *sideStage) finish() {
	st.running.Store(false)
	st.wg.Done()
}

// wait returns once the stage is done (at once when it was never added).
// When no other read is running it runs the stage itself if no one has
// started it, and otherwise yields for up to awaitSpin before it blocks.
// With other reads running it leaves the stage to its goroutine: the cores
// are busy with them, and taking the stages of late helpers lengthened the
// tail (four clients at 100k atoms: p99.9 16-21 ms against 9-13).
func (st *sideStage) wait() {
	if st.body == nil {
		return
	}
	if readsRunning.Load() <= 1 && st.run() {
		return
	}
	yieldWhile(func() bool { return st.running.Load() && readsRunning.Load() <= 1 }, awaitSpin)
	st.wg.Wait()
}

// settle returns once no goroutine runs the stage: one that no one
// started is marked done without running (its result is not needed).
func (st *sideStage) settle() {
	if st.body == nil {
		return
	}
	if st.claimed.CompareAndSwap(false, true) {
		st.finish()
		return
	}
	st.wg.Wait()
}

// readsRunning counts the reads (FSM.Read) running in the process, of
// every group's state.
var readsRunning atomic.Int32
