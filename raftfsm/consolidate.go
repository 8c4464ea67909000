package raftfsm

import (
	"encoding/binary"
	"slices"

	"github.com/hebbdb/hebb/vecmath"
)

// Consolidation constants (DESIGN.md §4).
const (
	clusterCos      = 0.92
	protectValence  = 0.8
	maxProtoConcept = 16
)

// ConsolidateCmd groups a domain's live episodes under prototypes.
// Prototype IDs derive from BaseID (a UUIDv7 chosen by the router) and a
// counter, so every replica mints the same IDs.
type ConsolidateCmd struct {
	Tenant string
	Domain string
	At     int64
	BaseID ID
}

// ConsolidateResult is the apply result of a ConsolidateCmd.
type ConsolidateResult struct {
	AtomsBefore         int
	AtomsAfter          int
	PrototypesCreated   int
	SingletonsProtected int
}

// Encode returns the command bytes of c.
func (c *ConsolidateCmd) Encode() []byte {
	e := enc{}
	e.u8(cmdConsolidate)
	e.str(c.Tenant)
	e.str(c.Domain)
	e.varint(c.At)
	e.id(c.BaseID)
	return e.b
}

// applyConsolidate clusters greedily at cosine ≥ clusterCos in feed order.
// Episodes with |valence| ≥ protectValence become protected singletons and
// are never merged. Members stay stored and fetchable by ID; search then
// finds the prototype instead of each member. near, when not nil, is the
// domain's neighbour lists found before under the read lock (apply).
func (f *FSM) applyConsolidate(c *ConsolidateCmd, near *neighbours) *ConsolidateResult {
	res := &ConsolidateResult{}
	t := f.tenants[c.Tenant]
	if t == nil || t.domains[c.Domain] == nil {
		return res
	}
	for _, a := range t.feed {
		if a.Domain != c.Domain || a.Type == Secret || a.Superseded() || !a.MergedInto.IsZero() {
			continue
		}
		res.AtomsBefore++
		if a.Type == Episode && abs(a.Valence) >= protectValence {
			t.counts.retype(a, Singleton)
			a.Type = Singleton
			res.SingletonsProtected++
		}
	}
	if near == nil {
		near = f.neighbours(c) // the same episodes: those left unprotected
	}
	merged := 0
	assigned := make([]bool, len(near.live))
	for i := range near.live {
		if assigned[i] {
			continue
		}
		members := []int32{int32(i)}
		for _, j := range near.of[i] {
			if j > int32(i) && !assigned[j] {
				members = append(members, j)
			}
		}
		if len(members) < 2 {
			continue
		}
		group := make([]*Atom, len(members))
		for k, j := range members {
			group[k] = near.live[j]
			assigned[j] = true
		}
		f.addPrototype(t, c, group, res.PrototypesCreated)
		res.PrototypesCreated++
		merged += len(group)
	}
	res.AtomsAfter = res.AtomsBefore - merged + res.PrototypesCreated
	return res
}

// neighbours are a domain's live episodes (unmerged, unprotected tips, in
// feed order) and, for each, the positions in live of the others at cosine
// clusterCos or more, ascending.
type neighbours struct {
	live []*Atom
	of   [][]int32
}

// neighbours finds the live episodes of c's domain that consolidation
// clusters, and their neighbours. It only reads the state, so apply runs
// it under the read lock (searches go on meanwhile), spread over the
// cores: comparing every pair took O(n²) dots under the write lock (0.9 s
// for a domain of 5,000 atoms, minutes for 100,000, every read of the
// group waiting). Each episode's search is the quantised one with
// DotFixed as its exact kernel, floored at clusterCos: it finds every
// neighbour unless an estimate misses its bound (vecmath doc), alike on
// every replica, as the write gate does.
func (f *FSM) neighbours(c *ConsolidateCmd) *neighbours {
	nb := &neighbours{}
	t := f.tenants[c.Tenant]
	if t == nil || t.domains[c.Domain] == nil {
		return nb
	}
	d := t.domains[c.Domain]
	for _, a := range t.feed {
		if a.Domain == c.Domain && a.Type == Episode && !a.Superseded() && a.MergedInto.IsZero() &&
			abs(a.Valence) < protectValence {
			nb.live = append(nb.live, a)
		}
	}
	pos := make([]int32, len(d.rows)) // domain row -> position in live, or -1
	for i := range pos {
		pos[i] = -1
	}
	for i, a := range nb.live {
		pos[a.slot] = int32(i)
	}
	nb.of = make([][]int32, len(nb.live))
	segs := d.segments(nil)
	const chunk = 64
	fanout((len(nb.live)+chunk-1)/chunk, func(k int) {
		s := vecmath.NewSearcher(quantizer(f.dim))
		row := make([]float32, f.dim)
		for i := k * chunk; i < min((k+1)*chunk, len(nb.live)); i++ {
			nb.of[i] = nearRows(s, segs, pos, d.vecTo(nb.live[i], f.dim, row), nb.live[i].slot)
		}
	})
	return nb
}

// nearRows returns the positions (pos of their rows) of the rows of segs
// other than self, listed in pos, at cosine clusterCos or more from vec,
// ascending.
func nearRows(s *vecmath.Searcher, segs []vecmath.Segment, pos []int32, vec []float32, self int32) []int32 {
	opt := vecmath.SearchOptions{K: 8, Floor: clusterCos, Exact: vecmath.DotFixed, MinWeight: 1, MaxWeight: 1,
		Weight: func(seg, row int) (float32, bool) {
			i := seg*arenaRows + row
			return 1, int32(i) != self && pos[i] >= 0
		}}
	for {
		hits := s.Search(vec, segs, &opt)
		if len(hits) < opt.K || opt.K >= len(pos) { // every row at the floor or more
			var out []int32
			for _, h := range hits {
				out = append(out, pos[h.Seg*arenaRows+h.Row])
			}
			slices.Sort(out)
			return out
		}
		opt.K *= 4
	}
}

func (f *FSM) addPrototype(t *tenant, c *ConsolidateCmd, group []*Atom, n int) {
	d := t.domains[c.Domain]
	centroid := make([]float32, f.dim)
	best := group[0]
	var concepts []string
	row := make([]float32, f.dim)
	importance := 0.0 // the members' mean: a prototype is as novel as what it stands for
	for _, a := range group {
		importance += a.Importance
		for i, x := range d.vecTo(a, f.dim, row) {
			centroid[i] += x
		}
		if a.AccessCount > best.AccessCount {
			best = a
		}
		concepts = union(concepts, a.Concepts)
	}
	vecmath.Normalize(centroid)
	if len(concepts) > maxProtoConcept {
		concepts = concepts[:maxProtoConcept]
	}
	id := c.BaseID
	binary.BigEndian.PutUint32(id[12:], binary.BigEndian.Uint32(id[12:])+uint32(n))
	p := f.newAtom(t, &WriteItem{ID: id, CreatedAt: c.At, Content: best.Content, Concepts: concepts,
		Domain: c.Domain, Type: Prototype}, importance/float64(len(group)), nil)
	t.insert(p, centroid)
	for _, a := range group {
		a.MergedInto = p.ID
	}
}
