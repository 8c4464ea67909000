package raftfsm

import (
	"cmp"
	"math/bits"
	"slices"
)

// Hebbian learning constants (DESIGN.md §4).
const (
	MaxWeight       = 1.0
	writeEta        = 0.05 // within-atom co-activation increment
	feedbackEta     = 0.2  // cross-atom co-activation rate, scaled by |outcome|
	edgeValenceRate = 0.3
	maxEdgeConcepts = 8 // concepts of one atom that take part in within-atom edges
)

// Edge is one undirected association row between two concepts, A < B, as
// callers see it (edgeSet.edge); it is stored as an edgeRec.
type Edge struct {
	A, B      string
	Weight    float64
	Count     int64
	Valence   float64
	UpdatedAt int64 // unix microseconds
}

// A concept keeps its edgeTop strongest edges of weight at least
// edgeTopFloor ordered: a neighbours call with a minimum weight of at least
// the floor (search's minEdgeWeight) and a limit up to edgeTop reads them
// instead of walking and sorting the concept's whole adjacency. Edges
// below the floor, most of them (a write's first touches leave 0.05 and
// 0.0975), cost the lists nothing.
const (
	edgeTop      = 64
	edgeTopFloor = 0.1
)

// The slab's chunks: edgeChunkMin records first, doubling up to
// edgeChunkMax, then edgeChunkMax each; edgeGeometric edges fill the
// doubling chunks.
const (
	edgeChunkMinBits = 4
	edgeChunkMaxBits = 10
	edgeGeometric    = 1<<edgeChunkMaxBits - 1<<edgeChunkMinBits
)

// edgeRec is an edge as stored: its figures and the ids of its two
// concepts, whose names live once in the concept table (a tenant holds
// ~13 edges per atom, so names in every row cost ~400 bytes an atom).
type edgeRec struct {
	Weight    float64
	Count     int64
	Valence   float64
	UpdatedAt int64    // unix microseconds
	id        [2]int32 // concept ids of A and B
}

// edge returns r with its concepts' names.
func (s *edgeSet) edge(r *edgeRec) Edge {
	a, b := s.ends(r)
	return Edge{A: a, B: b, Weight: r.Weight, Count: r.Count, Valence: r.Valence, UpdatedAt: r.UpdatedAt}
}

// ends returns the names of r's concepts, A then B.
func (s *edgeSet) ends(r *edgeRec) (a, b string) {
	return s.concepts.names[r.id[0]], s.concepts.names[r.id[1]]
}

// side returns which end of the edge concept c is.
func (r *edgeRec) side(c int32) int {
	if r.id[0] == c {
		return 0
	}
	return 1
}

// edgeSet is a tenant's association graph, with the tenant's concept ids.
//
// Edges are numbered in creation order and stored in a slab of chunks that
// never move, so an *Edge stays valid; no edge is ever removed. Each
// concept lists its edges in creation order (adj), counts those weighing
// at least edgeTopFloor (strong) and keeps the first min(strong, edgeTop)
// of them by before (top). A touch only raises a weight, so an edge
// only climbs: keeping the two top lists of an edge in order costs a
// binary search and a short copy each.
type edgeSet struct {
	concepts conceptIDs
	pairs    pairIndex // pairKey of the ids of A and B -> edge number
	slab     [][]edgeRec
	adj      [][]int32    // concept id -> its edges, creation order
	strong   []int32      // concept id -> how many of its edges weigh edgeTopFloor or more
	top      [][]topEntry // concept id -> its strongest edges, before order
	inTop    []uint64     // bit 2n+side: edge n is in the top list of its A (0), of its B (1)
	count    int
	// shared[k] is set while a snapshot may still read slab chunk k
	// (freeze): the next touch of one of its edges copies the chunk first,
	// unless open, the state's count of open snapshots, fell to zero.
	shared []bool
	open   *openSnaps
	sink   int64 // warm's loads
}

func newEdgeSet() edgeSet {
	return edgeSet{concepts: newConceptIDs(), pairs: newPairIndex(0)}
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// rec returns edge n.
func (s *edgeSet) rec(n int32) *edgeRec {
	k, i := chunkOf(n)
	return &s.slab[k][i]
}

// chunkOf returns the slab chunk of edge n and its place in it.
func chunkOf(n int32) (k, i int) {
	if n < edgeGeometric {
		k := bits.Len32(uint32(n)>>edgeChunkMinBits+1) - 1
		return k, int(n) - (1<<k-1)<<edgeChunkMinBits
	}
	m := int(n) - edgeGeometric
	return edgeChunkMaxBits - edgeChunkMinBits + m>>edgeChunkMaxBits, m & (1<<edgeChunkMaxBits - 1)
}

// own copies edge n's chunk if a snapshot may still read it, before the
// edge changes. Pointers into the old chunk then see the snapshot's
// figures; callers hold an edge's pointer only within one command or read.
func (s *edgeSet) own(n int32) {
	k, _ := chunkOf(n)
	switch {
	case k >= len(s.shared) || !s.shared[k]:
	case !s.open.any():
		s.shared = s.shared[:0] // no snapshot reads a chunk any more
	default:
		s.slab[k] = slices.Clone(s.slab[k])
		s.shared[k] = false
	}
}

// chunkCopy is a copy of a slab chunk a snapshot shares (copyShared).
type chunkCopy struct {
	k    int
	recs []edgeRec
}

// copyShared copies the chunks a snapshot shares that coactivateWithin of
// each list of concepts would change, reading only (a batch runs it under
// the read lock; adopt puts the copies in place under the write lock, so
// the batch's touches copy nothing): the first batches after a snapshot
// copied the chunks of most of a large tenant's edges under the write
// lock, 25-75 ms a batch (hebb bench write, 100k atoms).
func (s *edgeSet) copyShared(lists [][]string) []chunkCopy {
	if !slices.Contains(s.shared, true) || !s.open.any() {
		return nil // no snapshot since the chunks were last copied, or none open
	}
	var out []chunkCopy
	seen := make([]bool, len(s.shared))
	var ids [maxEdgeConcepts]int32
	var known [maxEdgeConcepts]bool
	for _, concepts := range lists {
		concepts = concepts[:min(len(concepts), maxEdgeConcepts)]
		for i, c := range concepts {
			ids[i], known[i] = s.concepts.lookup(c)
		}
		for i := range concepts {
			for j := i + 1; j < len(concepts); j++ {
				if !known[i] || !known[j] || ids[i] == ids[j] {
					continue // a new concept has no edge yet
				}
				a, b := ids[i], ids[j]
				if concepts[j] < concepts[i] {
					a, b = b, a
				}
				n, ok := s.pairs.get(pairKey(a, b))
				if !ok {
					continue
				}
				if k, _ := chunkOf(n); k < len(s.shared) && s.shared[k] && !seen[k] {
					seen[k] = true
					out = append(out, chunkCopy{k, slices.Clone(s.slab[k])})
				}
			}
		}
	}
	return out
}

// adopt puts copyShared's copies in place of chunks still shared, on the
// state copyShared read.
func (s *edgeSet) adopt(copies []chunkCopy) {
	for _, c := range copies {
		if c.k < len(s.shared) && s.shared[c.k] {
			s.slab[c.k] = c.recs
			s.shared[c.k] = false
		}
	}
}

func (s *edgeSet) get(a, b string) *edgeRec {
	if _, _, n, ok := s.find(a, b); ok {
		return s.rec(n)
	}
	return nil
}

// find returns the concept ids of a and b, the one whose name sorts first
// first, and the number of their edge, without interning either: ok is
// false when there is no such edge.
func (s *edgeSet) find(a, b string) (ia, ib, n int32, ok bool) {
	if b < a {
		a, b = b, a
	}
	ia, okA := s.concepts.lookup(a)
	ib, okB := s.concepts.lookup(b)
	if !okA || !okB {
		return 0, 0, 0, false
	}
	n, ok = s.pairs.get(pairKey(ia, ib))
	return ia, ib, n, ok
}

// touch reinforces the (a, b) row: w ← w + eta·(max − w), valence moves
// toward outcome at edgeValenceRate·|eta-scale| when hasOutcome.
func (s *edgeSet) touch(a, b string, eta, outcome float64, hasOutcome bool, at int64) *edgeRec {
	if a == b || a == "" || b == "" {
		return nil
	}
	if b < a {
		a, b = b, a
	}
	return s.touchIDs(s.concepts.intern(a), s.concepts.intern(b), eta, outcome, hasOutcome, at)
}

// touchExisting is touch of an edge that exists already: a pair without
// one is left alone (nil), and no concept is interned.
func (s *edgeSet) touchExisting(a, b string, eta, outcome float64, hasOutcome bool, at int64) *edgeRec {
	ia, ib, _, ok := s.find(a, b)
	if a == b || !ok {
		return nil
	}
	return s.touchIDs(ia, ib, eta, outcome, hasOutcome, at)
}

// touchIDs is touch of the concepts of ids ia and ib, the name of ia
// sorting first.
func (s *edgeSet) touchIDs(ia, ib int32, eta, outcome float64, hasOutcome bool, at int64) *edgeRec {
	n, ok := s.pairs.get(pairKey(ia, ib))
	if ok {
		s.own(n)
	} else {
		n = s.add(edgeRec{}, ia, ib) // a slot no snapshot reads
	}
	r := s.rec(n)
	old := r.Weight
	// The explicit float64 conversions round each product, so no
	// architecture fuses it into an FMA and replicas stay bit-identical.
	r.Weight += float64(eta * (MaxWeight - r.Weight))
	if r.Weight > MaxWeight {
		r.Weight = MaxWeight
	}
	r.Count++
	if hasOutcome {
		r.Valence += float64(edgeValenceRate * (outcome - r.Valence))
		r.Valence = clamp(r.Valence, -1, 1)
	}
	r.UpdatedAt = at
	s.reweigh(r, n, old, !ok)
	return r
}

// add stores r's figures as the next edge, of the concepts of ids ia and
// ib, and lists it in both adjacencies and the pair index; it enters the
// top lists through rank.
func (s *edgeSet) add(r edgeRec, ia, ib int32) int32 {
	n := s.addRow(r, ia, ib)
	s.pairs.put(pairKey(ia, ib), n)
	return n
}

// addRow is add but for the pair index.
func (s *edgeSet) addRow(r edgeRec, ia, ib int32) int32 {
	n := int32(s.count)
	if n < edgeGeometric && n == int32((1<<len(s.slab)-1)<<edgeChunkMinBits) ||
		n >= edgeGeometric && (int(n)-edgeGeometric)&(1<<edgeChunkMaxBits-1) == 0 {
		size := 1 << min(edgeChunkMinBits+len(s.slab), edgeChunkMaxBits)
		s.slab = append(s.slab, make([]edgeRec, size))
	}
	if n%32 == 0 {
		s.inTop = append(s.inTop, 0)
	}
	s.count++
	r.id = [2]int32{ia, ib}
	*s.rec(n) = r
	for _, c := range [2]int32{ia, ib} {
		if int(c) >= len(s.adj) {
			grow := int(c) + 1 - len(s.adj)
			s.adj = append(s.adj, make([][]int32, grow)...)
			s.strong = append(s.strong, make([]int32, grow)...)
			s.top = append(s.top, make([][]topEntry, grow)...)
		}
		s.adj[c] = append(s.adj[c], n)
	}
	return n
}

// link stores an edge read from a snapshot: r's figures between the
// concepts a and b (ids in the concept table). It returns the edge's
// number, which the caller lists in the pair index (a pairBuilder).
func (s *edgeSet) link(a, b int32, r edgeRec) int32 {
	n := s.addRow(r, a, b)
	s.reweigh(s.rec(n), n, 0, true)
	return n
}

// listed reports whether edge n is in the top list of its concept at side.
func (s *edgeSet) listed(n int32, side int) bool {
	b := 2*uint(n) + uint(side)
	return s.inTop[b/64]&(1<<(b%64)) != 0
}

// list records whether edge n is in the top list of its concept at side.
func (s *edgeSet) list(n int32, side int, on bool) {
	b := 2*uint(n) + uint(side)
	if on {
		s.inTop[b/64] |= 1 << (b % 64)
	} else {
		s.inTop[b/64] &^= 1 << (b % 64)
	}
}

// before is the order of neighbours: weight descending, then the name of
// A, then of B.
func (s *edgeSet) before(x, y *edgeRec) bool {
	if x.Weight != y.Weight {
		return x.Weight > y.Weight
	}
	names := s.concepts.names
	if x.id[0] != y.id[0] {
		return names[x.id[0]] < names[y.id[0]]
	}
	return names[x.id[1]] < names[y.id[1]]
}

// topEntry is one place of a top list: an edge and its weight, so that
// ordering by weight reads no edge record.
type topEntry struct {
	w float64
	n int32
}

// ahead reports whether edge r goes before the edge of entry e.
func (s *edgeSet) ahead(r *edgeRec, e topEntry) bool {
	if r.Weight != e.w {
		return r.Weight > e.w
	}
	return s.before(r, s.rec(e.n))
}

// reweigh keeps the counts and top lists of edge n (record r) right after
// its weight moved from old; isNew when the edge was just added.
func (s *edgeSet) reweigh(r *edgeRec, n int32, old float64, isNew bool) {
	w := r.Weight
	wasStrong := !isNew && old >= edgeTopFloor
	switch {
	case w < old || w != w:
		// Weights only grow; stay right should one shrink.
		if wasStrong {
			s.rebuildTop(r.id[0])
			s.rebuildTop(r.id[1])
		}
	case !(w >= edgeTopFloor):
	case !wasStrong:
		s.strong[r.id[0]]++
		s.strong[r.id[1]]++
		s.rank(r, n, 0)
		s.rank(r, n, 1)
	case w != old:
		s.rank(r, n, 0)
		s.rank(r, n, 1)
	}
}

// rank moves strong edge n (record r), new to the strong ones or grown, to
// its place in the top list of the concept at side of it.
func (s *edgeSet) rank(r *edgeRec, n int32, side int) {
	c := r.id[side]
	top := s.top[c]
	at := len(top) // where the edge is now; len: not in the list
	switch {
	case s.listed(n, side):
		for i := range top {
			if top[i].n == n {
				at = i
				break
			}
		}
	case len(top) < edgeTop:
		// Every strong edge of the concept is in its top list: add this one.
		top = append(top, topEntry{})
	case !s.ahead(r, top[edgeTop-1]):
		return
	default:
		last := s.rec(top[edgeTop-1].n)
		s.list(top[edgeTop-1].n, last.side(c), false)
		at = edgeTop - 1
	}
	s.list(n, side, true)
	// The edge only climbs: its place is the first of top[:at] it goes
	// before.
	lo, hi := 0, at
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.ahead(r, top[mid]) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	copy(top[lo+1:at+1], top[lo:at])
	top[lo] = topEntry{r.Weight, n}
	s.top[c] = top
}

// rebuildTop recounts the strong edges of concept c and rebuilds its top
// list from its adjacency.
func (s *edgeSet) rebuildTop(c int32) {
	var strong []int32
	for _, n := range s.adj[c] {
		r := s.rec(n)
		s.list(n, r.side(c), false)
		if r.Weight >= edgeTopFloor {
			strong = append(strong, n)
		}
	}
	slices.SortFunc(strong, func(x, y int32) int { return s.compare(s.rec(x), s.rec(y)) })
	s.strong[c] = int32(len(strong))
	top := make([]topEntry, 0, min(len(strong), edgeTop))
	for _, n := range strong[:cap(top)] {
		r := s.rec(n)
		s.list(n, r.side(c), true)
		top = append(top, topEntry{r.Weight, n})
	}
	s.top[c] = top
}

// compare is before as a comparison function.
func (s *edgeSet) compare(x, y *edgeRec) int { return compareBy(s.before)(x, y) }

// compareBy turns a strict order into a comparison function for
// slices.SortFunc.
func compareBy[T any](before func(x, y T) bool) func(x, y T) int {
	return func(x, y T) int {
		switch {
		case before(x, y):
			return -1
		case before(y, x):
			return 1
		}
		return 0
	}
}

// neighbours returns the edges touching c with weight at least min, sorted
// by weight descending then by A then B, so every caller sees a
// deterministic order; at most limit of them when limit > 0. With min at
// least edgeTopFloor and a limit up to edgeTop, or no more strong edges
// than edgeTop, the concept's top list holds the answer.
func (s *edgeSet) neighbours(c string, min float64, limit int) []*edgeRec {
	id, ok := s.concepts.lookup(c)
	if !ok || int(id) >= len(s.adj) {
		return []*edgeRec{}
	}
	if min >= edgeTopFloor && (limit > 0 && limit <= edgeTop || s.strong[id] <= edgeTop) {
		top := s.top[id]
		n := 0
		for n < len(top) && (limit <= 0 || n < limit) && top[n].w >= min {
			n++
		}
		out := make([]*edgeRec, n)
		for i := range out {
			out[i] = s.rec(top[i].n)
		}
		return out
	}
	if limit > 0 && limit < len(s.adj[id]) {
		return s.best(s.adj[id], min, limit)
	}
	var recs []*edgeRec
	for _, n := range s.adj[id] {
		if r := s.rec(n); r.Weight >= min {
			recs = append(recs, r)
		}
	}
	slices.SortFunc(recs, s.compare)
	return recs
}

// best returns the first limit, by before, of the edges of adj weighing at
// least min, in that order: the prefix a full sort would give (before is a
// total order on distinct edges), kept in a heap whose root is the last
// edge kept, so an edge that does not make the cut costs one comparison
// and the selection O(len(adj)·log limit) instead of a sort of them all.
func (s *edgeSet) best(adj []int32, min float64, limit int) []*edgeRec {
	h := make([]*edgeRec, 0, limit)
	for _, n := range adj {
		r := s.rec(n)
		switch {
		case !(r.Weight >= min):
		case len(h) < limit:
			h = append(h, r)
			s.up(h, len(h)-1)
		case s.before(r, h[0]):
			h[0] = r
			s.down(h, 0)
		}
	}
	slices.SortFunc(h, s.compare)
	return h
}

// up and down keep h a heap whose root comes last by before.
func (s *edgeSet) up(h []*edgeRec, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !s.before(h[p], h[i]) {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func (s *edgeSet) down(h []*edgeRec, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && s.before(h[c], h[c+1]) {
			c++
		}
		if !s.before(h[i], h[c]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// frozenEdges is the edge rows as a snapshot saw them (the slab's chunks,
// the first count rows) and the concept names they use, to be copied and
// sorted without the state's lock.
type frozenEdges struct {
	chunks [][]edgeRec
	count  int
	names  []string // concept id -> name: append-only, so this view stays valid
}

// freeze returns the edge rows as they are. With share it marks every
// chunk shared, so a later touch copies a chunk before changing a row in
// it (own) while open counts a snapshot, and the view stays valid after the
// lock is released; a new edge goes to a slot past count, which the view
// does not read. Without share the caller must hold the lock until it has
// read the rows (open is then unused).
func (s *edgeSet) freeze(share bool, open *openSnaps) frozenEdges {
	if share {
		s.open = open
		s.shared = slices.Grow(s.shared[:0], len(s.slab))[:len(s.slab)]
		for k := range s.shared {
			s.shared[k] = true
		}
	}
	return frozenEdges{chunks: slices.Clone(s.slab), count: s.count, names: s.concepts.names}
}

// at returns row n of the view.
func (fe frozenEdges) at(n int32) *edgeRec {
	k, i := chunkOf(n)
	return &fe.chunks[k][i]
}

// order returns the row numbers ordered by the names of A, then B (each
// edge's A is the lesser name): the concepts are ranked by name once, then
// the rows' rank pairs (unique: one row per pair) sort by radix.
func (fe frozenEdges) order() []int32 {
	byName := make([]int32, len(fe.names))
	for i := range byName {
		byName[i] = int32(i)
	}
	slices.SortFunc(byName, func(x, y int32) int { return cmp.Compare(fe.names[x], fe.names[y]) })
	rank := make([]int32, len(byName))
	for r, id := range byName {
		rank[id] = int32(r)
	}
	keys := make([]keyedRow, 0, fe.count)
	for _, chunk := range fe.chunks {
		for _, r := range chunk[:min(len(chunk), fe.count-len(keys))] {
			keys = append(keys, keyedRow{pairKey(rank[r.id[0]], rank[r.id[1]]), int32(len(keys))})
		}
	}
	radixSort(keys, bits.Len(uint(len(rank))))
	order := make([]int32, len(keys))
	for j, k := range keys {
		order[j] = k.i
	}
	return order
}

// keyedRow is a row's sort key and its place.
type keyedRow struct {
	k uint64
	i int32
}

// radixDigit is the width of one counting pass of radixSort.
const radixDigit = 11

// radixSort sorts keys by k, whose halves (bits 32 up, bits 0 up) each fit
// in width bits, by least-significant-digit counting passes over the bits
// in use. Both halves take the same number of passes, so the sorted keys
// end in keys, not in the scratch buffer.
func radixSort(keys []keyedRow, width int) {
	if len(keys) < 2 {
		return
	}
	buf := make([]keyedRow, len(keys))
	var count [1 << radixDigit]int
	for _, half := range [2]uint{0, 32} {
		for shift := half; shift < half+uint(width); shift += radixDigit {
			clear(count[:])
			for _, k := range keys {
				count[k.k>>shift&(1<<radixDigit-1)]++
			}
			sum := 0
			for d, c := range count {
				count[d] = sum
				sum += c
			}
			for _, k := range keys {
				d := k.k >> shift & (1<<radixDigit - 1)
				buf[count[d]] = k
				count[d]++
			}
			keys, buf = buf, keys
		}
	}
}

// coactivateWithin adds the small within-atom increment for every pair of an
// atom's first concepts.
func (s *edgeSet) coactivateWithin(concepts []string, at int64) {
	if len(concepts) > maxEdgeConcepts {
		concepts = concepts[:maxEdgeConcepts]
	}
	var ids [maxEdgeConcepts]int32
	for i, c := range concepts {
		if c != "" {
			ids[i] = s.concepts.intern(c)
		}
	}
	var keys [maxEdgeConcepts * (maxEdgeConcepts - 1) / 2]uint64
	pairs := keys[:0]
	for i := 0; i < len(concepts); i++ {
		for j := i + 1; j < len(concepts); j++ {
			a, b := concepts[i], concepts[j]
			if a == b || a == "" || b == "" {
				continue
			}
			if b < a {
				pairs = append(pairs, pairKey(ids[j], ids[i]))
			} else {
				pairs = append(pairs, pairKey(ids[i], ids[j]))
			}
		}
	}
	s.sink += s.warm(pairs)
	for _, k := range pairs {
		s.touchIDs(int32(k>>32), int32(uint32(k)), writeEta, 0, false, at)
	}
}

// warm loads what touching the pairs will read, pair by pair in loops
// whose iterations do not depend on each other, so the CPU fetches them in
// parallel: each pair's slot in the index and its record is a cache miss
// in a large tenant, which touchIDs, one pair after the other, would
// otherwise wait for in turn. The sum only keeps the loads.
func (s *edgeSet) warm(pairs []uint64) (sum int64) {
	for _, k := range pairs {
		sum += s.pairs.warm(k)
	}
	for _, k := range pairs {
		if n, ok := s.pairs.get(k); ok {
			sum += s.rec(n).Count
		}
	}
	return sum
}

func clamp(v, lo, hi float64) float64 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
