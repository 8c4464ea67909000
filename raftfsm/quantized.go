package raftfsm

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/hebbdb/hebb/vecmath"
)

// Quantised search (vecmath.Searcher) over the domain arenas: search.go
// calls searchDomains, and the write gate (gate.go) its own searcher, when
// the rows in scope reach codedRows.

// parallelRows is the number of rows in scope from which a search splits
// its scans over GOMAXPROCS goroutines.
const parallelRows = 32768

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
// codes are scanned exactly inside the same search.
func searchDomains(dim int, vec []float32, doms []*domainIndex, opt *vecmath.SearchOptions,
	weight func(a *Atom) (float32, bool), hit func(d *domainIndex, a *Atom, h vecmath.Hit)) {
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
	opt.Weight = func(seg, row int) (float32, bool) {
		o := owners[seg]
		return weight(o.d.rows[o.base+row])
	}
	if rows >= parallelRows && runtime.GOMAXPROCS(0) > 1 {
		opt.Fanout = fanout
	}
	for _, h := range s.Search(vec, segs, opt) {
		o := owners[h.Seg]
		hit(o.d, o.d.rows[o.base+h.Row], h)
	}
}

// fanout runs task(0..n-1) on up to GOMAXPROCS goroutines, the caller's
// included, and returns when all are done.
func fanout(n int, task func(i int)) {
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			task(i)
		}
	}
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// noFloor is the floor of a search that keeps every score.
var noFloor = float32(math.Inf(-1))
