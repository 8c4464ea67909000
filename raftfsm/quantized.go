package raftfsm

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hebbdb/hebb/vecmath"
)

// Quantised search (vecmath.Searcher) over the domain arenas: search.go
// calls searchDomains, and the write gate (gate.go) its own searcher, when
// the rows in scope reach codedRows.

// parallelRows is the number of rows in scope from which a search splits
// its scans over GOMAXPROCS goroutines.
var parallelRows = 32768 // a variable for tests

// coding is the quantizer of one dimension, a pool of searchers (their
// scratch is sized by the largest search they ran) and one of write gates
// (gate.go).
type coding struct {
	q        *vecmath.Quantizer
	pool     sync.Pool // *domainSearch
	gates    sync.Pool
	bounders sync.Pool // *vecmath.Bounder
}

// domainSearch is a searcher and the segment lists of a search over
// domains, pooled: a search of a million rows in 100 domains listed some
// 80 KB of them.
type domainSearch struct {
	s      *vecmath.Searcher
	segs   []vecmath.Segment
	owners []segOwner
	heavy  []int32 // the segments' Heavy rows
}

// segOwner is the domain of a segment and the domain row of its first row.
type segOwner struct {
	d    *domainIndex
	base int
}

var codings sync.Map // dim -> *coding

func codingFor(dim int) *coding {
	if c, ok := codings.Load(dim); ok {
		return c.(*coding)
	}
	q := vecmath.NewQuantizer(dim)
	c, _ := codings.LoadOrStore(dim, &coding{q: q, pool: sync.Pool{
		New: func() any { return &domainSearch{s: vecmath.NewSearcher(q)} },
	}, bounders: sync.Pool{New: func() any { return vecmath.NewBounder(q) }}})
	return c.(*coding)
}

// quantizer returns the (deterministic, shared) quantizer of dim.
func quantizer(dim int) *vecmath.Quantizer { return codingFor(dim).q }

// searchDomains runs a quantised search over the domains' blocks, asking
// weight for each row's weight (opt.Weight is set here), and calls hit for
// every row it returns (score order). Domains below the size that keeps
// codes are scanned exactly inside the same search; a search spreads its
// scans over the cores when spreads says so. idle, when not nil, runs
// once on another goroutine: on a helper of the first spread scan once
// that has no task left for it (fanoutThen), or, when the search did not
// spread, on a goroutine of its own once the search is done. Rows whose
// metadata signature flt rules out (when not nil) are never weighed.
func searchDomains(dim int, vec []float32, doms []*domainIndex, opt *vecmath.SearchOptions, idle func(),
	flt *filter, weight func(a *Atom) (float32, bool), hit func(d *domainIndex, a *Atom, h vecmath.Hit)) {
	c := codingFor(dim)
	ds := c.pool.Get().(*domainSearch)
	defer func() {
		clear(ds.segs) // no arena or domain stays reachable from the pool
		clear(ds.owners)
		c.pool.Put(ds)
	}()
	s, segs, owners := ds.s, ds.segs[:0], ds.owners[:0]
	rows := 0
	for _, d := range doms {
		from := len(segs)
		segs = d.segments(segs)
		for k := range len(segs) - from {
			owners = append(owners, segOwner{d, k * arenaRows})
		}
		rows += len(d.rows)
	}
	ds.segs, ds.owners = segs, owners
	if opt.HeavyWeight > opt.MaxWeight {
		ds.heavy = listHeavy(doms, segs, ds.heavy)
	}
	opt.Weight = func(seg, row int) (float32, bool) {
		o := owners[seg]
		return weight(o.d.rows[o.base+row])
	}
	opt.Prune = nil
	if flt != nil {
		opt.Prune = func(seg, from int, out []bool) {
			o := owners[seg]
			flt.prune(o.d, o.base+from, out)
		}
	}
	opt.Fanout = nil
	if spreads(rows) {
		opt.Fanout = func(n int, task func(i int)) {
			then := idle
			idle = nil // the first scan's helpers only
			fanoutThen(n, task, then)
		}
	}
	for _, h := range s.Search(vec, segs, opt) {
		o := owners[h.Seg]
		hit(o.d, o.d.rows[o.base+h.Row], h)
	}
	if idle != nil {
		go idle()
	}
}

// listHeavy sets the Heavy rows of the domains' segments (as
// domainIndex.segments appended them, in order), in block rows, from the
// domains' heavy slots; scratch holds them, and is returned.
func listHeavy(doms []*domainIndex, segs []vecmath.Segment, scratch []int32) []int32 {
	total := 0
	for _, d := range doms {
		total += len(d.heavy)
	}
	scratch = slices.Grow(scratch[:0], total) // no reallocation below
	k := 0
	for _, d := range doms {
		h := d.heavy
		for b := range d.blocks {
			start, base := len(scratch), int32(b*arenaRows)
			for len(h) > 0 && h[0] < base+int32(arenaRows) {
				scratch = append(scratch, h[0]-base)
				h = h[1:]
			}
			segs[k].Heavy = scratch[start:len(scratch):len(scratch)]
			k++
		}
	}
	return scratch
}

// spreads reports whether a search of rows rows spreads its scans over the
// cores.
func spreads(rows int) bool { return rows >= parallelRows && runtime.GOMAXPROCS(0) > 1 }

// fanout runs task(0..n-1) on up to GOMAXPROCS goroutines, the caller's
// included, and returns when all are done.
func fanout(n int, task func(i int)) { fanoutThen(n, task, nil) }

// spinFor is how long fanoutThen's caller yields, waiting for the tasks
// its helpers took, before it blocks: a few tasks' time.
const spinFor = 200 * time.Microsecond

// fanoutThen is fanout that also runs then (when not nil), once, on
// another goroutine: the first helper goroutine that finds no task left
// runs it before it exits (a goroutine of its own does when n leaves no
// room for helpers); the caller does not wait for it, nor for a helper that
// started too late to take a task.
//
// A core that parks (its goroutine blocks and finds nothing else to run)
// can take a few hundred microseconds to wake on a VM: a search's stages
// after its scan, started as goroutines once the scan was done, used to
// wait that long for the core its scan helper had just left. So the
// caller, done with its own tasks, yields while helpers finish theirs (a
// task is a few tens of microseconds) rather than parking, and work that
// can start when the scan ends goes to a helper, which is running then.
func fanoutThen(n int, task func(i int), then func()) {
	var next, finished atomic.Int64
	done := make(chan struct{})
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			task(i)
			if finished.Add(1) == int64(n) {
				close(done)
			}
		}
	}
	var ran atomic.Bool
	helpers := min(n, runtime.GOMAXPROCS(0)) - 1
	for range helpers {
		go func() {
			work()
			if then != nil && ran.CompareAndSwap(false, true) {
				then()
			}
		}()
	}
	if helpers <= 0 && then != nil {
		go then()
	}
	work()
	if yieldWhile(func() bool { return finished.Load() < int64(n) }, spinFor) {
		<-done
	}
}

// yieldWhile yields the core while busy reports true, for up to d, instead
// of parking the goroutine (see fanoutThen); it reports whether busy still
// held when it gave up.
func yieldWhile(busy func() bool, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for spin := 1; busy(); spin++ {
		if spin%16 == 0 && time.Now().After(deadline) {
			return true
		}
		runtime.Gosched()
	}
	return false
}

// noFloor is the floor of a search that keeps every score.
var noFloor = float32(math.Inf(-1))
