package raftfsm

import (
	"fmt"
	"math"

	"github.com/hebbdb/hebb/vecmath"
)

// ReasonSecretIDMismatch is the result reason of a secret write sealed for
// the wrong atom ID (a concurrent first store of the same alias).
const ReasonSecretIDMismatch = "secret exists under another atom id"

// duplicateCos is the write gate's refusal threshold: the embedder cannot
// tell two texts apart (DESIGN.md §4).
const duplicateCos = 1 - 1e-6

func (f *FSM) applyWrite(c *WriteCmd) *WriteResults {
	t := f.tenantFor(c.Tenant)
	if c.Idem != nil && len(c.Items) > 0 {
		if res := t.replayOrConflict(c, c.Items[0].CreatedAt); res != nil {
			return res
		}
	}
	if c.Limit > 0 && int64(t.atomCount()+len(c.Items)) > c.Limit {
		return &WriteResults{Err: &ApplyError{Kind: ErrLimit, Message: "Atom limit of the plan reached"}}
	}
	out := &WriteResults{Results: make([]WriteResult, len(c.Items))}
	defer t.remember(c, out)
	for i := range c.Items {
		it := &c.Items[i]
		// An existing external_ref answers before supersede validation, so a
		// retried write that superseded something stays idempotent.
		if r, ok := existingRef(t, it); ok {
			out.Results[i] = r
			continue
		}
		var targets []*Atom
		if !c.Batch && len(it.Supersedes) > 0 {
			var err *ApplyError
			if targets, err = validateSupersedes(t, it.Supersedes); err != nil {
				out.Err = err
				out.Results = nil
				return out
			}
		}
		out.Results[i] = f.writeOne(t, it, targets)
	}
	return out
}

// validateSupersedes checks targets in list order and stops at the first
// failure (interface §4.1 rules 2–3). Nothing is touched here.
func validateSupersedes(t *tenant, ids []ID) ([]*Atom, *ApplyError) {
	targets := make([]*Atom, 0, len(ids))
	for _, id := range ids {
		a := t.atoms[id]
		switch {
		case a == nil:
			return nil, &ApplyError{Kind: ErrNotFound, Target: id,
				Message: fmt.Sprintf("Supersede target %s not found", id)}
		case a.Type == Secret:
			return nil, &ApplyError{Kind: ErrConflict, Target: id,
				Message: fmt.Sprintf("Supersede target %s is a secret and cannot be superseded", id)}
		case a.Superseded():
			return nil, &ApplyError{Kind: ErrConflict, Target: a.SupersededBy,
				Message: fmt.Sprintf("Supersede target %s was already superseded by %s", id, a.SupersededBy)}
		}
		targets = append(targets, a)
	}
	return targets, nil
}

// existingRef returns the answer to a non-secret write whose external_ref
// is already taken: the existing atom, nothing stored.
func existingRef(t *tenant, it *WriteItem) (WriteResult, bool) {
	if it.Type == Secret || it.ExternalRef == "" {
		return WriteResult{}, false
	}
	a := t.extRefs[it.ExternalRef]
	if a == nil {
		return WriteResult{}, false
	}
	return WriteResult{AtomID: a.ID, Importance: a.Importance,
		Reason: "external_ref exists", Superseded: []ID{}}, true
}

func (f *FSM) writeOne(t *tenant, it *WriteItem, targets []*Atom) WriteResult {
	if it.Type == Secret {
		return f.writeSecret(t, it)
	}
	if len(it.Vector) != f.dim {
		panic(fmt.Sprintf("raftfsm: vector of dimension %d in a group of dimension %d", len(it.Vector), f.dim))
	}
	near, maxCos := f.nearestTip(t, it, targets)
	if near != nil && float64(maxCos) >= duplicateCos {
		return WriteResult{Importance: 0, Superseded: []ID{},
			Reason: fmt.Sprintf("duplicate of %s: the embedder cannot tell it apart", near.ID)}
	}
	importance := 1.0
	if near != nil {
		importance = clamp(1-float64(maxCos), 0, 1)
	}
	superseded := make([]ID, 0, len(targets))
	for _, tg := range targets {
		superseded = append(superseded, tg.ID)
	}
	a := f.newAtom(t, it, importance, append([]ID(nil), superseded...))
	t.insert(a, it.Vector)
	for _, tg := range targets {
		tg.SupersededBy = a.ID
	}
	t.edges.coactivateWithin(a.Concepts, a.CreatedAt)
	return WriteResult{Stored: true, AtomID: a.ID, Importance: importance,
		Reason: "stored", Superseded: superseded}
}

// newAtom builds the atom of an item. supersedes lists the validated
// targets only: a batch item's unhonoured supersedes are not recorded.
func (f *FSM) newAtom(t *tenant, it *WriteItem, importance float64, supersedes []ID) *Atom {
	created := it.CreatedAt
	if created <= t.lastCreated {
		created = t.lastCreated + 1
	}
	a := &Atom{
		ID: it.ID, Content: it.Content, Concepts: it.Concepts, Domain: it.Domain,
		Metadata: it.Metadata, Fingerprint: it.Fingerprint, ExternalRef: it.ExternalRef,
		Importance: importance, Type: it.Type, Supersedes: supersedes,
		CreatedAt: created, Provenance: it.Provenance, Sealed: it.Sealed, slot: -1,
	}
	if len(a.Supersedes) == 0 {
		a.Supersedes = nil
	}
	return a
}

// nearestTip finds the nearest live tip of the item's domain, skipping the
// atoms this write is about to supersede.
func (f *FSM) nearestTip(t *tenant, it *WriteItem, targets []*Atom) (*Atom, float32) {
	d := t.domains[it.Domain]
	if d == nil || len(d.rows) == 0 {
		return nil, 0
	}
	skip := func(i int) bool {
		a := d.rows[i]
		if a.Superseded() {
			return true
		}
		for _, tg := range targets {
			if tg == a {
				return true
			}
		}
		return false
	}
	if d.coded() {
		return nearestCoded(f.dim, d, it.Vector, skip)
	}
	// SIMD ranks the rows; the best few are then re-scored with the Ref
	// kernel, which rounds identically on every CPU, so replicas agree on
	// the stored importance and the gate's verdict (SIMD and scalar dot
	// products differ only in the last bits, far below the candidates' gap).
	scores := f.scratch(len(d.rows))
	vecmath.DotArena(it.Vector, d.arena, f.dim, scores)
	for i := range scores {
		if skip(i) {
			scores[i] = float32(math.NaN())
		}
	}
	var best *Atom
	bestCos := float32(math.Inf(-1))
	for _, i := range vecmath.TopK(scores, gateRecheck, f.topk[:0]) {
		a := d.rows[i]
		cos := vecmath.DotRef(it.Vector, d.vec(a, f.dim))
		if cos > bestCos || cos == bestCos && compareID(a.ID, best.ID) < 0 {
			best, bestCos = a, cos
		}
	}
	if best == nil {
		return nil, 0
	}
	return best, bestCos
}

// nearestCoded is nearestTip's search through the domain's codes: the
// quantised search with DotRef as its exact kernel, so every replica,
// whatever its CPU, finds the same row and the same cosine. It finds the
// nearest row unless an estimate misses its bound (vecmath doc), and then
// every replica misses it alike: the codes are a function of the rows.
func nearestCoded(dim int, d *domainIndex, vec []float32, skip func(i int) bool) (*Atom, float32) {
	opt := &vecmath.SearchOptions{K: 1, Floor: noFloor, Exact: vecmath.DotRef, MinWeight: 1, MaxWeight: 1,
		Weight: func(_, row int) (float32, bool) { return 1, !skip(row) }}
	var best *Atom
	var bestCos float32
	searchDomains(dim, vec, []*domainIndex{d}, opt, func(d *domainIndex, h vecmath.Hit) {
		// Hits tie at the best cosine; the lowest ID wins, as in nearestTip.
		if a := d.rows[h.Row]; best == nil || compareID(a.ID, best.ID) < 0 {
			best, bestCos = a, h.Sim
		}
	})
	return best, bestCos
}

// gateRecheck is how many SIMD-ranked rows the gate re-scores exactly.
const gateRecheck = 8

// scratch returns the FSM's reusable score buffer (Apply is never
// concurrent with itself, so one buffer serves every write).
func (f *FSM) scratch(n int) []float32 {
	if cap(f.gateScores) < n {
		f.gateScores = make([]float32, n)
	}
	return f.gateScores[:n]
}

// writeSecret stores or replaces a sealed secret under its external_ref
// (secret:<alias>): storing an existing alias again keeps its atom ID.
func (f *FSM) writeSecret(t *tenant, it *WriteItem) WriteResult {
	if a := t.extRefs[it.ExternalRef]; a != nil && a.Type == Secret {
		if a.ID != it.ID {
			// The value was sealed for another atom ID: the router reseals
			// for this one and retries.
			return WriteResult{AtomID: a.ID, Reason: ReasonSecretIDMismatch, Superseded: []ID{}}
		}
		a.Sealed = it.Sealed
		a.Content = it.Content
		return WriteResult{Stored: true, AtomID: a.ID, Reason: "replaced", Superseded: []ID{}}
	}
	a := f.newAtom(t, it, 0, nil)
	t.insert(a, nil)
	return WriteResult{Stored: true, AtomID: a.ID, Reason: "stored", Superseded: []ID{}}
}
