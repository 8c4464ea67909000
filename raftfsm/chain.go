package raftfsm

import "sort"

// ChainBudget is the number of lookups one chain walk may spend.
const ChainBudget = 64

// ChainRevision is one revision of a supersession chain.
type ChainRevision struct {
	Atom   Atom
	IsHead bool
}

// ChainResult is the answer of Chain (interface §4.7).
type ChainResult struct {
	Revisions []ChainRevision
	Dangling  []ID
	Truncated bool
}

// Chain walks supersession links in both directions from id. It reports
// false when id is not a non-secret atom of the tenant.
func (f *FSM) Chain(tenantID string, id ID) (ChainResult, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	res := ChainResult{Revisions: []ChainRevision{}, Dangling: []ID{}}
	t := f.tenants[tenantID]
	if t == nil {
		return res, false
	}
	if a := t.atoms[id]; a == nil || a.Type == Secret {
		return res, false
	}
	found := make(map[ID]*Atom)
	seen := map[ID]bool{id: true}
	queue := []ID{id}
	lookups := 0
	for len(queue) > 0 {
		if lookups == ChainBudget {
			res.Truncated = true
			break
		}
		cur := queue[0]
		queue = queue[1:]
		lookups++
		a := t.atoms[cur]
		if a == nil || a.Type == Secret {
			res.Dangling = append(res.Dangling, cur)
			continue
		}
		found[cur] = a
		next := append([]ID{}, a.Supersedes...)
		if a.Superseded() {
			next = append(next, a.SupersededBy)
		}
		for _, n := range next {
			if !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	for _, a := range topoOrder(found) {
		res.Revisions = append(res.Revisions, ChainRevision{Atom: *a, IsHead: !a.Superseded()})
	}
	return res, true
}

// topoOrder orders atoms so a predecessor never follows its successor;
// (created_at, id) decides among atoms with no order between them.
func topoOrder(set map[ID]*Atom) []*Atom {
	indeg := make(map[ID]int, len(set))
	succ := make(map[ID][]*Atom, len(set))
	for _, a := range set {
		for _, p := range a.Supersedes {
			if _, ok := set[p]; ok {
				indeg[a.ID]++
				succ[p] = append(succ[p], a)
			}
		}
	}
	var ready []*Atom
	for _, a := range set {
		if indeg[a.ID] == 0 {
			ready = append(ready, a)
		}
	}
	out := make([]*Atom, 0, len(set))
	for len(ready) > 0 {
		sort.Slice(ready, func(i, j int) bool { return feedLess(ready[i], ready[j]) })
		a := ready[0]
		ready = ready[1:]
		out = append(out, a)
		for _, s := range succ[a.ID] {
			if indeg[s.ID]--; indeg[s.ID] == 0 {
				ready = append(ready, s)
			}
		}
	}
	return out
}
