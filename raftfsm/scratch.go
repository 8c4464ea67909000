package raftfsm

import "sync"

// scratch is one read's working memory, pooled: a read in a tenant of
// 100k atoms otherwise allocates some 350 KB of maps and slices (postings
// counted, candidates scored), and the collector cycles that garbage
// causes are what a read's tail latency waits behind.
type scratch struct {
	byAtom  map[*Atom]int      // ranked: candidate index of each atom scored
	counted map[*Atom]int32    // countMatches: index in order
	order   []*Atom            // countMatches: atoms in first-seen order
	matched []int32            // countMatches: query concepts each carries
	fresh   []fresh            // conceptMatches: atoms outside the semantic pool
	cands   []candidate        // ranked
	hebb    map[*Atom]int32    // hebbian: index in hcands
	hcands  []candidate        // hebbian: each atom's best score so far
	sinks   [2]AtomType        // countMatches and hebbian: what prefetchAhead read
	rows    [2][]float32       // per stage (mainStage, assocStage): a row read from disk
	seated  map[*Atom]bool     // Read: atoms given a place in the answer
	names   []string           // domainNames
	doms    []*domainIndex     // ranked: the domains of names
	weight  map[string]float64 // expand: each expanded concept's edge weight
	query   map[string]bool    // expand: the query's concepts
}

// fresh is an atom carrying query concepts that the semantic stage did
// not score, with its concept score and that score's relevance.
type fresh struct {
	a   *Atom
	cs  float64
	rel float64
}

// scratchCap bounds the candidates a pooled scratch keeps room for; a
// larger read's memory goes back to the collector.
const scratchCap = 1 << 14

var scratches = sync.Pool{New: func() any {
	return &scratch{
		byAtom:  make(map[*Atom]int, 64),
		counted: make(map[*Atom]int32, maxPostingsRead),
		hebb:    make(map[*Atom]int32, maxAssocPostings),
		seated:  make(map[*Atom]bool, 16),
		weight:  make(map[string]float64, 16),
		query:   make(map[string]bool, 16),
	}
}}

func getScratch() *scratch { return scratches.Get().(*scratch) }

// putScratch empties sc (maps keep their room) and pools it.
func putScratch(sc *scratch) {
	if cap(sc.cands) > scratchCap || cap(sc.hcands) > scratchCap || cap(sc.order) > scratchCap {
		return
	}
	clear(sc.byAtom)
	clear(sc.counted)
	clear(sc.hebb)
	clear(sc.seated)
	clear(sc.weight)
	clear(sc.query)
	clear(sc.names) // drop the references, keep the room
	clear(sc.doms)
	sc.names, sc.doms = sc.names[:0], sc.doms[:0]
	sc.order, sc.matched, sc.fresh = sc.order[:0], sc.matched[:0], sc.fresh[:0]
	sc.cands, sc.hcands = sc.cands[:0], sc.hcands[:0]
	scratches.Put(sc)
}
