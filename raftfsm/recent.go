package raftfsm

import "sort"

// RecentRequest is one page of the queryless feed (interface §4.5).
type RecentRequest struct {
	Tenant         string
	Domains        []string // nil: every domain
	Since, Until   *int64   // inclusive bounds, unix microseconds
	ExcludeAuthor  string
	HideReplaced   bool
	IncludeHistory bool
	Limit          int
	Cursor         *Cursor // nil: from the newest
}

// Recent returns up to Limit atoms, newest first, strictly older than the
// cursor, and the cursor of the next page (nil at the end of the feed).
// Because created_at only grows inside a tenant, paging visits every atom
// that existed when the walk began exactly once.
func (f *FSM) Recent(req *RecentRequest) ([]Atom, *Cursor) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := []Atom{}
	t := f.tenants[req.Tenant]
	if t == nil || req.Limit <= 0 {
		return out, nil
	}
	scope := make(map[string]bool, len(req.Domains))
	for _, d := range req.Domains {
		scope[d] = true
	}
	i := len(t.feed) - 1
	if req.Cursor != nil {
		key := &Atom{CreatedAt: req.Cursor.CreatedAt, ID: req.Cursor.ID}
		i = sort.Search(len(t.feed), func(i int) bool { return !feedLess(t.feed[i], key) }) - 1
	}
	if req.Until != nil {
		// The feed is in created_at order: start at the newest atom within
		// until rather than skipping the newer ones one by one (a page of
		// a past window walked every atom written since).
		u := *req.Until
		i = min(i, sort.Search(len(t.feed), func(i int) bool { return t.feed[i].CreatedAt > u })-1)
	}
	for ; i >= 0; i-- {
		a := t.feed[i]
		if req.Since != nil && a.CreatedAt < *req.Since {
			break
		}
		if !req.wants(a, scope) {
			continue
		}
		if len(out) == req.Limit {
			last := out[len(out)-1]
			return out, &Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
		}
		out = append(out, *a)
	}
	return out, nil
}

func (req *RecentRequest) wants(a *Atom, scope map[string]bool) bool {
	switch {
	case a.Type == Secret:
		return false
	case req.Domains != nil && !scope[a.Domain]:
		return false
	case req.ExcludeAuthor != "" && a.Provenance != nil && a.Provenance.Principal == req.ExcludeAuthor:
		return false
	case req.HideReplaced && !req.IncludeHistory && a.Superseded():
		return false
	}
	return true
}
