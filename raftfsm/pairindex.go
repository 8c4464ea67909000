package raftfsm

import "math/bits"

// pairIndex maps the pairKey of two concept ids to their edge's number: an
// open-addressing table with linear probing over parallel arrays of keys
// and numbers, 12 bytes a slot at a load of at most 3/4. A Go map of the
// same took about 40 bytes an edge: 300 MB of a million-atom tenant's
// 7.7 million edges.
type pairIndex struct {
	keys []uint64 // pairKey+1; 0 marks an empty slot
	vals []int32
	n    int
}

// newPairIndex returns an index with room for n pairs.
func newPairIndex(n int) pairIndex {
	size := max(16, n+n/3+1)
	return pairIndex{keys: make([]uint64, size), vals: make([]int32, size)}
}

// home returns the first slot probed for k.
func (p *pairIndex) home(k uint64) uint64 {
	// Fibonacci hashing spreads the ids' small integers over all 64
	// bits; the high bits of its product with the size pick the slot.
	i, _ := bits.Mul64(k*0x9E3779B97F4A7C15, uint64(len(p.keys)))
	return i
}

// slot returns the slot holding k, or the empty slot where k would go.
func (p *pairIndex) slot(k uint64) int {
	i := p.home(k)
	for {
		if x := p.keys[i]; x == k || x == 0 {
			return int(i)
		}
		if i++; i == uint64(len(p.keys)) {
			i = 0
		}
	}
}

// warm loads the first slot key would be looked up in (edgeSet.warm).
func (p *pairIndex) warm(key uint64) int64 {
	if len(p.keys) == 0 {
		return 0
	}
	i := p.home(key + 1)
	return int64(p.keys[i]) + int64(p.vals[i])
}

// get returns the number of pair key, if it is listed.
func (p *pairIndex) get(key uint64) (int32, bool) {
	if len(p.keys) == 0 {
		return 0, false
	}
	i := p.slot(key + 1)
	return p.vals[i], p.keys[i] != 0
}

// put lists key with number v, or changes its number.
func (p *pairIndex) put(key uint64, v int32) {
	if 4*(p.n+1) > 3*len(p.keys) {
		p.grow()
	}
	i := p.slot(key + 1)
	if p.keys[i] == 0 {
		p.keys[i] = key + 1
		p.n++
	}
	p.vals[i] = v
}

// grow makes room for half as many pairs again.
func (p *pairIndex) grow() {
	old := *p
	*p = newPairIndex(max(16, old.n+old.n/2))
	for i, k := range old.keys {
		if k != 0 {
			j := p.slot(k)
			p.keys[j], p.vals[j] = k, old.vals[i]
			p.n++
		}
	}
}

// pairBuilder fills a pair index on a goroutine of its own while a restore
// goes on reading edges: inserting a million-atom tenant's 8 million pairs
// (a cache miss each in a 130 MB table) took ~2 s of the restore's one
// goroutine, with the other core idle. Keys go over in batches, in order,
// so the index is the one putting them one by one makes.
type pairBuilder struct {
	batch []pairPut
	full  chan []pairPut // batches to insert
	free  chan []pairPut // batches inserted, to reuse
	done  chan struct{}
}

type pairPut struct {
	key uint64
	n   int32
}

// pairBatch is how many pairs a batch carries; pairBatches how many
// batches a builder has.
const (
	pairBatch   = 8192
	pairBatches = 4
)

// buildPairs starts a builder of p, which nothing else may touch until its
// wait returns.
func buildPairs(p *pairIndex) *pairBuilder {
	b := &pairBuilder{full: make(chan []pairPut, pairBatches), free: make(chan []pairPut, pairBatches),
		done: make(chan struct{})}
	for range pairBatches - 1 {
		b.free <- make([]pairPut, 0, pairBatch)
	}
	b.batch = make([]pairPut, 0, pairBatch)
	go func() {
		defer close(b.done)
		for batch := range b.full {
			for _, x := range batch {
				p.put(x.key, x.n)
			}
			b.free <- batch[:0]
		}
	}()
	return b
}

// put lists key with number n.
func (b *pairBuilder) put(key uint64, n int32) {
	b.batch = append(b.batch, pairPut{key, n})
	if len(b.batch) == pairBatch {
		b.full <- b.batch
		b.batch = <-b.free
	}
}

// wait inserts what is left and returns once every pair is in the index.
func (b *pairBuilder) wait() {
	if len(b.batch) > 0 {
		b.full <- b.batch
	}
	close(b.full)
	<-b.done
}
