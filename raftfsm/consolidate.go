package raftfsm

import (
	"encoding/binary"

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
// finds the prototype instead of each member.
func (f *FSM) applyConsolidate(c *ConsolidateCmd) *ConsolidateResult {
	res := &ConsolidateResult{}
	t := f.tenants[c.Tenant]
	if t == nil || t.domains[c.Domain] == nil {
		return res
	}
	d := t.domains[c.Domain]
	var live []*Atom
	for _, a := range t.feed {
		if a.Domain != c.Domain || a.Type == Secret || a.Superseded() || !a.MergedInto.IsZero() {
			continue
		}
		res.AtomsBefore++
		switch {
		case a.Type == Episode && abs(a.Valence) >= protectValence:
			a.Type = Singleton
			res.SingletonsProtected++
		case a.Type == Episode:
			live = append(live, a)
		}
	}
	merged := 0
	assigned := make(map[*Atom]bool, len(live))
	vecs := make(map[*Atom][]float32, len(live)) // read once: rows may be on disk
	for _, a := range live {
		vecs[a] = d.ownVec(a, f.dim)
	}
	for i, seed := range live {
		if assigned[seed] {
			continue
		}
		group := []*Atom{seed}
		sv := vecs[seed]
		for _, other := range live[i+1:] {
			if !assigned[other] && vecmath.DotFixed(sv, vecs[other]) >= clusterCos {
				group = append(group, other)
			}
		}
		if len(group) < 2 {
			continue
		}
		for _, a := range group {
			assigned[a] = true
		}
		f.addPrototype(t, c, group, res.PrototypesCreated)
		res.PrototypesCreated++
		merged += len(group)
	}
	res.AtomsAfter = res.AtomsBefore - merged + res.PrototypesCreated
	return res
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
