package raftfsm

// conceptIDs interns a tenant's concept strings: concept id i is names[i].
// Atoms, postings and edges then share one copy of each string, and edges
// key their pairs and adjacency by dense ids instead of strings. Ids are
// handed out in first-seen order and never reused; they are derived state
// (a restore hands them out again) and never leave the process.
type conceptIDs struct {
	ids   map[string]int32
	names []string
}

func newConceptIDs() conceptIDs { return conceptIDs{ids: make(map[string]int32)} }

// intern returns the id of s, adding it when new.
func (c *conceptIDs) intern(s string) int32 {
	if id, ok := c.ids[s]; ok {
		return id
	}
	id := int32(len(c.names))
	c.names = append(c.names, s)
	c.ids[s] = id
	return id
}

// internBytes is intern of string(b), which it copies only when new.
func (c *conceptIDs) internBytes(b []byte) int32 {
	if id, ok := c.ids[string(b)]; ok {
		return id
	}
	return c.intern(string(b))
}

// lookup returns the id of s, if it has one.
func (c *conceptIDs) lookup(s string) (int32, bool) {
	id, ok := c.ids[s]
	return id, ok
}

// internAll interns every concept of list.
func (c *conceptIDs) internAll(list []string) {
	for _, s := range list {
		c.intern(s)
	}
}

// canonicalIDs replaces every concept of list by its interned copy, in
// place, and appends their ids to ids.
func (c *conceptIDs) canonicalIDs(list []string, ids []int32) []int32 {
	for i, s := range list {
		id := c.intern(s)
		list[i] = c.names[id]
		ids = append(ids, id)
	}
	return ids
}
