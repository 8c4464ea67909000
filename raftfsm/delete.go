package raftfsm

import "fmt"

func (f *FSM) applyDeleteAtom(c *DeleteAtomCmd) *DeleteAtomResult {
	t := f.tenants[c.Tenant]
	if t == nil {
		return &DeleteAtomResult{PredecessorsLeftHidden: []ID{}}
	}
	a := t.atoms[c.ID]
	if a == nil {
		return &DeleteAtomResult{PredecessorsLeftHidden: []ID{}}
	}
	if a.Type == Secret {
		return &DeleteAtomResult{PredecessorsLeftHidden: []ID{}, Err: &ApplyError{Kind: ErrForbidden,
			Target: a.ID, Message: "Secret atoms cannot be deleted through this endpoint"}}
	}
	left := hiddenPredecessors(t, a)
	destroyed := len(a.Supersedes) > 0 || a.Superseded()
	if a.Type == Prototype {
		releaseMembers(t, a)
	}
	t.remove(a, f.dim)
	return &DeleteAtomResult{Deleted: 1, PredecessorsLeftHidden: left, HistoryDestroyed: destroyed}
}

// releaseMembers makes the episodes a prototype absorbed searchable again
// when the prototype goes: only its row is removed (interface §4.7), and
// its members, hidden from search because it stood for them, would have
// stayed hidden for good (no read saw them, consolidation skipped them, and
// the write gate refused their content again). They are in its domain.
func releaseMembers(t *tenant, p *Atom) {
	d := t.domains[p.Domain]
	if d == nil {
		return
	}
	for _, a := range d.rows {
		if a.MergedInto == p.ID {
			a.MergedInto = ID{}
		}
	}
}

// hiddenPredecessors lists the atoms a replaced that still point at a: once a
// is gone they have no live successor and stay hidden when filtering is on.
func hiddenPredecessors(t *tenant, a *Atom) []ID {
	out := []ID{}
	for _, id := range a.Supersedes {
		if p := t.atoms[id]; p != nil && p.SupersededBy == a.ID {
			out = append(out, id)
		}
	}
	return out
}

func (f *FSM) applyDeleteDomain(c *DeleteDomainCmd) *DeleteDomainResult {
	t := f.tenants[c.Tenant]
	var d *domainIndex
	if t != nil {
		d = t.domains[c.Domain]
	}
	if d == nil {
		return &DeleteDomainResult{Err: &ApplyError{Kind: ErrNotFound,
			Message: fmt.Sprintf("Domain %q not found", c.Domain)}}
	}
	victims := make([]*Atom, len(d.rows))
	copy(victims, d.rows)
	gone := make(map[ID]bool, len(victims))
	for _, a := range victims {
		gone[a.ID] = true
	}
	left := 0
	for _, a := range victims {
		for _, id := range a.Supersedes {
			if p := t.atoms[id]; p != nil && !gone[id] && p.SupersededBy == a.ID {
				left++
			}
		}
	}
	res := &DeleteDomainResult{Deleted: len(victims), SkippedSecrets: d.secrets, LeftHiddenCount: left}
	t.removeRows(d)
	return res
}
