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
type sideStage struct {
	wg      sync.WaitGroup
	running atomic.Bool
}

// add counts the stage before it starts.
func (st *sideStage) add() {
	st.running.Store(true)
	st.wg.Add(1)
}

// finish marks the stage done; its goroutine calls it last.
func (st *sideStage) finish() {
	st.running.Store(false)
	st.wg.Done()
}

// wait returns once the stage is done (at once when it was never added):
// when no other read is running, it yields for up to awaitSpin first.
func (st *sideStage) wait() {
	yieldWhile(func() bool { return st.running.Load() && readsRunning.Load() <= 1 }, awaitSpin)
	st.wg.Wait()
}

// readsRunning counts the reads (FSM.Read) running in the process, of
// every group's state.
var readsRunning atomic.Int32
