package raftfsm

import (
	"sort"
)

// Get returns a copy of a non-secret atom of the tenant.
func (f *FSM) Get(tenantID string, id ID) (Atom, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if t := f.tenants[tenantID]; t != nil {
		if a := t.atoms[id]; a != nil && a.Type != Secret {
			return *a, true
		}
	}
	return Atom{}, false
}

// GetByExternalRef returns a copy of the non-secret atom with that ref.
func (f *FSM) GetByExternalRef(tenantID, ref string) (Atom, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if t := f.tenants[tenantID]; t != nil {
		if a := t.extRefs[ref]; a != nil && a.Type != Secret {
			return *a, true
		}
	}
	return Atom{}, false
}

// Stats are the tenant's counters (interface §2.9).
type Stats struct {
	TotalAtoms           int
	Episodes             int
	Prototypes           int
	Singletons           int
	HebbianEdges         int
	EpisodicFingerprints int
	Domains              []string
	AvgValence           float64
	AvgImportance        float64
}

// Stats returns the tenant's statistics; secrets are excluded. The
// counters are kept as atoms change (counts.go): only the domains are
// listed here.
func (f *FSM) Stats(tenantID string) Stats {
	f.mu.RLock()
	defer f.mu.RUnlock()
	st := Stats{Domains: []string{}}
	t := f.tenants[tenantID]
	if t == nil {
		return st
	}
	y := &t.counts
	st.Episodes, st.Prototypes, st.Singletons = y.byType[Episode], y.byType[Prototype], y.byType[Singleton]
	st.TotalAtoms = y.atoms()
	if st.TotalAtoms > 0 {
		st.AvgValence = y.valence.float() / float64(st.TotalAtoms)
		st.AvgImportance = y.importance.float() / float64(st.TotalAtoms)
	}
	st.HebbianEdges = t.edges.count
	st.EpisodicFingerprints = y.prints
	st.Domains = t.sortedDomains()
	return st
}

// AtomCount returns the tenant's total_atoms (every non-secret revision).
func (f *FSM) AtomCount(tenantID string) int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t := f.tenants[tenantID]
	if t == nil {
		return 0
	}
	return t.atomCount()
}

// AtomCountAfter is the tenant's atom count once items are stored, counting
// only the items that may store: one whose external_ref is taken answers
// with that atom (applyWrite counts the same way).
func (f *FSM) AtomCountAfter(tenantID string, items []*WriteItem) int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t := f.tenants[tenantID]
	if t == nil {
		return len(items)
	}
	n := t.atomCount()
	for _, it := range items {
		if _, taken := existingRef(t, it); !taken {
			n++
		}
	}
	return n
}

// Domains returns the tenant's active domains, sorted.
func (f *FSM) Domains(tenantID string) []string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if t := f.tenants[tenantID]; t != nil {
		return t.sortedDomains()
	}
	return []string{}
}

// Cursor is a position in a tenant's feed: the (created_at, id) of the last
// item returned.
type Cursor struct {
	CreatedAt int64
	ID        ID
}

// ExportPage returns up to limit atoms (secrets included) in feed order
// after the cursor (nil: from the start), and the cursor of the last one.
func (f *FSM) ExportPage(tenantID string, after *Cursor, limit int) ([]Atom, *Cursor) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t := f.tenants[tenantID]
	if t == nil {
		return nil, nil
	}
	i := 0
	if after != nil {
		key := &Atom{CreatedAt: after.CreatedAt, ID: after.ID}
		i = sort.Search(len(t.feed), func(i int) bool { return feedLess(key, t.feed[i]) })
	}
	end := i + max(limit, 0)
	if end > len(t.feed) {
		end = len(t.feed)
	}
	out := make([]Atom, 0, end-i)
	for _, a := range t.feed[i:end] {
		out = append(out, *a)
	}
	if len(out) == 0 {
		return out, nil
	}
	last := out[len(out)-1]
	return out, &Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
}

// Secret returns the secret stored under external ref secret:<alias>.
func (f *FSM) Secret(tenantID, ref string) (Atom, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if t := f.tenants[tenantID]; t != nil {
		if a := t.extRefs[ref]; a != nil && a.Type == Secret {
			return *a, true
		}
	}
	return Atom{}, false
}

// Secrets lists the tenant's secrets ordered by external ref.
func (f *FSM) Secrets(tenantID string) []Atom {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := []Atom{}
	t := f.tenants[tenantID]
	if t == nil {
		return out
	}
	for _, a := range t.feed {
		if a.Type == Secret {
			out = append(out, *a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ExternalRef < out[j].ExternalRef })
	return out
}
