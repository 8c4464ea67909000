package raftfsm

import "fmt"

// ReasonSecretIDMismatch is the result reason of a secret write sealed for
// the wrong atom ID (a concurrent first store of the same alias).
const ReasonSecretIDMismatch = "secret exists under another atom id"

// applyWrite applies a write command; pre, when not nil, holds the gates of
// a batchable command against the rows held before it (pregate).
func (f *FSM) applyWrite(c *WriteCmd, pre *batchGate) *WriteResults {
	t := f.tenantFor(c.Tenant)
	if c.Idem != nil && len(c.Items) > 0 {
		if res := t.replayOrConflict(c, c.Items[0].CreatedAt); res != nil {
			return res
		}
	}
	// The atom limit counts the items that may store: an item whose
	// external_ref exists answers with that atom and stores nothing, so a
	// retry of a write that took the account to its limit still gets it.
	limited := c.Limit > 0 && int64(t.atomCount()+t.newRefs(c.Items)) > c.Limit
	if limited && len(c.Items) > 1 {
		return limitResult()
	}
	out := &WriteResults{Results: make([]WriteResult, len(c.Items))}
	defer t.remember(c, out)
	if f.batchable(c) {
		f.writeBatch(t, c.Items, out.Results, pre)
		return out
	}
	g := getGate(f.dim)
	defer putGate(g)
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
		if limited {
			// One item: one the gate refuses stores nothing either, and
			// gets its answer as below the limit.
			if r, dup := f.duplicate(t, g, it, targets); dup {
				out.Results[i] = r
				continue
			}
			// Through out, so that remember keeps no record of it.
			out.Err, out.Results = limitResult().Err, nil
			return out
		}
		out.Results[i] = f.writeOne(t, g, it, targets)
	}
	return out
}

func limitResult() *WriteResults {
	return &WriteResults{Err: &ApplyError{Kind: ErrLimit, Message: "Atom limit of the plan reached"}}
}

// newRefs counts the items that may store: all but those whose external_ref
// is already taken.
func (t *tenant) newRefs(items []WriteItem) int {
	n := 0
	for i := range items {
		if _, taken := existingRef(t, &items[i]); !taken {
			n++
		}
	}
	return n
}

// duplicate reports whether the gate refuses a non-secret item, with its
// result.
func (f *FSM) duplicate(t *tenant, g *gate, it *WriteItem, targets []*Atom) (WriteResult, bool) {
	if it.Type == Secret {
		return WriteResult{}, false
	}
	near, cos := g.nearest(t.domains[it.Domain], it.Vector, targets, true)
	if _, ok := gateVerdict(near, cos); ok {
		return WriteResult{}, false
	}
	return duplicateResult(near), true
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
			return nil, &ApplyError{Kind: ErrSecretTarget, Target: id,
				Message: fmt.Sprintf("Supersede target %s is a secret and cannot be superseded", id)}
		case a.Superseded() && t.atoms[a.SupersededBy] != nil:
			// A successor deleted since left the target with none (its
			// pointer dangles): it may be superseded again, else it stayed
			// hidden for good and the 409 named an atom that answers 404.
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
		Reason: reasonRefExistsText, Superseded: []ID{}}, true
}

func (f *FSM) writeOne(t *tenant, g *gate, it *WriteItem, targets []*Atom) WriteResult {
	if it.Type == Secret {
		return f.writeSecret(t, it)
	}
	if len(it.Vector) != f.dim {
		panic(fmt.Sprintf("raftfsm: vector of dimension %d in a group of dimension %d", len(it.Vector), f.dim))
	}
	near, cos := g.nearest(t.domains[it.Domain], it.Vector, targets, true)
	importance, ok := gateVerdict(near, cos)
	if !ok {
		return duplicateResult(near)
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
		Reason: reasonStoredText, Superseded: superseded}
}

// gateVerdict turns the nearest live tip (nil when none) and its cosine
// into the item's importance, 1 − max_cos; ok is false for a duplicate.
func gateVerdict(near *Atom, cos float32) (importance float64, ok bool) {
	switch {
	case near == nil:
		return 1, true
	case float64(cos) >= duplicateCos:
		return 0, false
	}
	return clamp(1-float64(cos), 0, 1), true
}

// duplicateResult is the result of an item the gate refuses.
func duplicateResult(near *Atom) WriteResult {
	return WriteResult{Importance: 0, Superseded: []ID{},
		Reason: duplicateReason(near.ID)}
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
		if !it.KeepContent {
			a.Content = it.Content
		}
		return WriteResult{Stored: true, AtomID: a.ID, Reason: reasonReplacedText, Superseded: []ID{}}
	}
	a := f.newAtom(t, it, 0, nil)
	t.insert(a, nil)
	return WriteResult{Stored: true, AtomID: a.ID, Reason: reasonStoredText, Superseded: []ID{}}
}
