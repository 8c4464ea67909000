package raftfsm

import (
	"sync"

	"github.com/hebbdb/hebb/vecmath"
)

// scratch is one read's working memory, pooled: a read in a tenant of
// 100k atoms otherwise allocates some 350 KB of maps and slices (postings
// counted, candidates scored), and the collector cycles that garbage
// causes are what a read's tail latency waits behind.
type scratch struct {
	byAtom   map[*Atom]int      // ranked: candidate index of each atom scored
	counted  atomIndex          // countMatches: index in found
	found    []tally            // countMatches: atoms in first-seen order
	fresh    []fresh            // conceptMatches: atoms outside the semantic pool
	cands    []candidate        // ranked
	reaching atomIndex          // hebbian (reach): index in reached
	reached  []reached          // hebbian: the atoms reached
	bcodes   []*vecmath.Codes   // hebbian (bound): the codes of each row bounded
	brows    []int32            // hebbian (bound): the rows bounded
	bat      []int32            // hebbian (bound): each row's index in reached
	bubs     []float32          // hebbian (bound): each row's bound
	hcands   []candidate        // hebbian: the atoms scored
	sinks    [2]AtomType        // countMatches and hebbian: what prefetchAhead read
	rows     [2][]float32       // per stage (mainStage, assocStage): a row read from disk
	seated   map[*Atom]bool     // Read: atoms given a place in the answer
	names    []string           // domainNames
	doms     []*domainIndex     // ranked: the domains of names
	weight   map[string]float64 // expand: each expanded concept's edge weight
	query    map[string]bool    // expand: the query's concepts
}

// fresh is an atom carrying query concepts that the semantic stage did
// not score, with its concept score and that score's relevance.
type fresh struct {
	a   *Atom
	id  ID // a's, not to read a again to break ties
	cs  float64
	rel float64
}

// scratchCap bounds the candidates a pooled scratch keeps room for; a
// larger read's memory goes back to the collector.
const scratchCap = 1 << 14

var scratches = sync.Pool{New: func() any {
	return &scratch{
		byAtom: make(map[*Atom]int, 64),
		seated: make(map[*Atom]bool, 16),
		weight: make(map[string]float64, 16),
		query:  make(map[string]bool, 16),
	}
}}

func getScratch() *scratch { return scratches.Get().(*scratch) }

// putScratch empties sc (maps keep their room) and pools it.
func putScratch(sc *scratch) {
	if cap(sc.cands) > scratchCap || cap(sc.hcands) > scratchCap || cap(sc.found) > scratchCap ||
		cap(sc.reached) > scratchCap {
		return
	}
	clear(sc.byAtom)
	sc.counted.release()
	sc.reaching.release()
	clear(sc.seated)
	clear(sc.weight)
	clear(sc.query)
	clear(sc.names) // drop the references, keep the room
	clear(sc.doms)
	sc.names, sc.doms = sc.names[:0], sc.doms[:0]
	sc.found, sc.fresh = sc.found[:0], sc.fresh[:0]
	sc.cands, sc.hcands = sc.cands[:0], sc.hcands[:0]
	clear(sc.reached[:cap(sc.reached)]) // no atom stays reachable from the pool
	sc.reached = sc.reached[:0]
	scratches.Put(sc)
}
