package raftfsm

import (
	"slices"
	"sort"
)

// tenant is the state of one org or room inside a group.
type tenant struct {
	id       string
	atoms    map[ID]*Atom
	domains  map[string]*domainIndex
	extRefs  map[string]*Atom
	prints   map[string][]*Atom // fingerprint -> atoms, insertion order
	postings [][]*Atom          // concept id -> atoms carrying it, insertion order (posting)
	feed     []*Atom            // every atom ordered by (CreatedAt, ID)
	edges    edgeSet
	idem     map[string]*idemRecord
	// idemExpiry holds idem's records (and ones replaced since) by expiry.
	idemExpiry idemHeap
	counts     counts     // Stats' counters (counts.go)
	room       *Room      // set when the tenant is a room
	chat       *chatState // set when the tenant is a chat room (chat.go)
	// lastCreated keeps created_at strictly increasing inside the tenant, so
	// the feed is append-only and a cursor is stable under concurrent writes.
	lastCreated int64
	vs          *vecStore // the state's rows on disk (spill.go)
	// valMin and valMax bound the valences the tenant's atoms have had
	// (widened, never narrowed, until a restore recomputes them from the
	// atoms): quantised searches bound relevance weights by their weights,
	// all 1 until some feedback, so bounds stay as tight as the valences
	// allow (after one feedback of outcome 1, a valence of 0.3 bounds
	// relevance by 1 + α·0.3 instead of 1 + α).
	valMin, valMax float64
}

// noteValence widens the tenant's valence bounds to hold v.
func (t *tenant) noteValence(v float64) {
	t.valMin, t.valMax = min(t.valMin, v), max(t.valMax, v)
}

// setValence gives a (indexed) valence v, widening the valence bounds and
// listing or unlisting a's row among its domain's heavy rows.
func (t *tenant) setValence(a *Atom, v float64) {
	was := a.Valence
	t.counts.revalue(a, v)
	a.Valence = v
	t.noteValence(v)
	if d := t.domains[a.Domain]; d != nil && a.slot >= 0 && (was > 0) != (v > 0) {
		d.setHeavy(a.slot, v > 0)
	}
}

func newTenant(id string, vs *vecStore) *tenant {
	return &tenant{
		id:      id,
		vs:      vs,
		atoms:   make(map[ID]*Atom),
		domains: make(map[string]*domainIndex),
		extRefs: make(map[string]*Atom),
		prints:  make(map[string][]*Atom),
		edges:   newEdgeSet(),
		idem:    make(map[string]*idemRecord),
	}
}

// domainName is the name of t's domain named b, or a copy of b.
func (t *tenant) domainName(b []byte) string {
	if d := t.domains[string(b)]; d != nil {
		return d.name
	}
	return string(b)
}

func (t *tenant) domain(name string) *domainIndex {
	d := t.domains[name]
	if d == nil {
		d = &domainIndex{name: name, vs: t.vs}
		t.domains[name] = d
	}
	return d
}

// insert adds a fully built atom to every index. vec is nil for secrets.
func (t *tenant) insert(a *Atom, vec []float32) {
	if d := t.index(a); a.Type != Secret {
		d.add(a, vec, nil)
	}
}

// index adds a to every index but its domain's arena and returns the
// domain, where the caller then adds a's row (domainIndex.add) unless a is
// a secret. The atom's domain and concepts become the tenant's shared
// copies of those strings (its concept slice is rewritten in place).
func (t *tenant) index(a *Atom) *domainIndex {
	if cap(a.Concepts) > len(a.Concepts) {
		a.Concepts = slices.Clone(a.Concepts)
	}
	var buf [16]int32
	return t.indexCanonical(a, t.edges.concepts.canonicalIDs(a.Concepts, buf[:0]))
}

// indexCanonical is index of an atom whose concepts are the tenant's
// interned names already, in a list of its own, and whose concept ids are
// ids (dec.atomOf).
func (t *tenant) indexCanonical(a *Atom, ids []int32) *domainIndex {
	t.atoms[a.ID] = a
	t.noteValence(a.Valence)
	d := t.domain(a.Domain)
	a.Domain = d.name
	a.slot = -1
	if a.Type == Secret {
		d.secrets++
	}
	if a.ExternalRef != "" {
		t.extRefs[a.ExternalRef] = a
	}
	if fp := a.Fingerprint; fp != "" {
		if a.Type != Secret && !anyCounted(t.prints[fp]) {
			t.counts.prints++
		}
		t.prints[fp] = append(t.prints[fp], a)
	}
	for _, id := range ids {
		if int(id) >= len(t.postings) {
			t.postings = slices.Grow(t.postings, int(id)+1-len(t.postings))[:id+1]
		}
		t.postings[id] = append(t.postings[id], a)
	}
	t.counts.add(a)
	t.feedInsert(a)
	if a.CreatedAt > t.lastCreated {
		t.lastCreated = a.CreatedAt
	}
	return d
}

func feedLess(a, b *Atom) bool {
	if a.CreatedAt != b.CreatedAt {
		return a.CreatedAt < b.CreatedAt
	}
	return compareID(a.ID, b.ID) < 0
}

func (t *tenant) feedInsert(a *Atom) {
	n := len(t.feed)
	if n == 0 || feedLess(t.feed[n-1], a) {
		t.feed = append(t.feed, a)
		return
	}
	i := sort.Search(n, func(i int) bool { return feedLess(a, t.feed[i]) })
	t.feed = append(t.feed, nil)
	copy(t.feed[i+1:], t.feed[i:])
	t.feed[i] = a
}

func (t *tenant) feedIndex(a *Atom) int {
	i := sort.Search(len(t.feed), func(i int) bool { return !feedLess(t.feed[i], a) })
	if i < len(t.feed) && t.feed[i] == a {
		return i
	}
	return -1
}

// posting lists the atoms carrying concept c, in insertion order.
func (t *tenant) posting(c string) []*Atom {
	if id, ok := t.postingID(c); ok {
		return t.postings[id]
	}
	return nil
}

// postingID is the index in postings of concept c's list, if it has one.
func (t *tenant) postingID(c string) (int32, bool) {
	id, ok := t.edges.concepts.lookup(c)
	return id, ok && int(id) < len(t.postings)
}

// remove deletes a from every index. Supersession pointers of other atoms
// are left as they are: a dangling pointer is how history reports a break.
func (t *tenant) remove(a *Atom, dim int) {
	delete(t.atoms, a.ID)
	if d := t.domains[a.Domain]; d != nil {
		if a.Type == Secret {
			d.secrets--
		} else {
			d.remove(a, dim)
		}
		if d.empty() {
			delete(t.domains, a.Domain)
		}
	}
	if a.ExternalRef != "" && t.extRefs[a.ExternalRef] == a {
		delete(t.extRefs, a.ExternalRef)
	}
	if fp := a.Fingerprint; fp != "" {
		t.prints[fp] = removeAtom(t.prints[fp], a)
		if a.Type != Secret && !anyCounted(t.prints[fp]) {
			t.counts.prints--
		}
		if len(t.prints[fp]) == 0 {
			delete(t.prints, fp)
		}
	}
	for _, c := range a.Concepts {
		if id, ok := t.postingID(c); ok {
			t.postings[id] = removeAtom(t.postings[id], a)
			if len(t.postings[id]) == 0 {
				t.postings[id] = nil
			}
		}
	}
	t.counts.remove(a)
	if i := t.feedIndex(a); i >= 0 {
		copy(t.feed[i:], t.feed[i+1:])
		t.feed[len(t.feed)-1] = nil
		t.feed = t.feed[:len(t.feed)-1]
	}
}

// removeRows deletes every atom of d's rows, the domain's atoms but its
// secrets, from every index, leaving the state removing them one by one
// (remove) leaves: each list they are in loses them in one pass, in order,
// instead of one shift of the feed and of each of their concepts' postings
// per atom (a domain of 80k atoms took 1.7 s under the write lock). The
// domain keeps only its secrets' count (a domain that never had rows), or
// goes when it has none.
func (t *tenant) removeRows(d *domainIndex) {
	if len(d.rows) == 0 {
		return
	}
	// The atoms by address: lists are filtered without reading the atoms
	// they point at (a cache miss each in a large tenant).
	set := make(map[*Atom]struct{}, len(d.rows))
	for _, a := range d.rows {
		set[a] = struct{}{}
	}
	gone := func(a *Atom) bool { _, ok := set[a]; return ok }
	prints := make(map[string]bool)
	postings := make(map[int32]bool)
	for _, a := range d.rows {
		t.counts.remove(a)
		delete(t.atoms, a.ID)
		if a.ExternalRef != "" && t.extRefs[a.ExternalRef] == a {
			delete(t.extRefs, a.ExternalRef)
		}
		if fp := a.Fingerprint; fp != "" && !prints[fp] {
			prints[fp] = true
			t.prints[fp] = keepAtoms(t.prints[fp], gone)
			if !anyCounted(t.prints[fp]) {
				t.counts.prints-- // a's fingerprint was counted
			}
			if len(t.prints[fp]) == 0 {
				delete(t.prints, fp)
			}
		}
		for _, c := range a.Concepts {
			if id, ok := t.postingID(c); ok && !postings[id] {
				postings[id] = true
				t.postings[id] = keepAtoms(t.postings[id], gone)
				if len(t.postings[id]) == 0 {
					t.postings[id] = nil
				}
			}
		}
	}
	t.feed = keepAtoms(t.feed, gone)
	d.clear()
	if d.empty() {
		delete(t.domains, d.name)
	}
}

// keepAtoms compacts list, in place and in order, to the atoms not gone.
func keepAtoms(list []*Atom, gone func(*Atom) bool) []*Atom {
	out := list[:0]
	for _, a := range list {
		if !gone(a) {
			out = append(out, a)
		}
	}
	clear(list[len(out):])
	return out
}

func removeAtom(list []*Atom, a *Atom) []*Atom {
	for i, x := range list {
		if x == a {
			copy(list[i:], list[i+1:])
			list[len(list)-1] = nil
			return list[:len(list)-1]
		}
	}
	return list
}

// frozenVec returns the atom's row as a snapshot keeps it: its memory,
// where it is on disk, or neither for a secret.
func (t *tenant) frozenVec(a *Atom, dim int) frozenVec {
	if a.slot < 0 {
		return frozenVec{}
	}
	d := t.domains[a.Domain]
	b := &d.blocks[int(a.slot)/arenaRows]
	j := int(a.slot) % arenaRows
	if b.disk != nil {
		return frozenVec{disk: b.disk, row: int32(j)}
	}
	return frozenVec{mem: b.vecs[j*dim : (j+1)*dim]}
}

// sortedDomains returns the names of domains holding at least one
// non-secret atom, sorted.
func (t *tenant) sortedDomains() []string {
	out := make([]string, 0, len(t.domains))
	for name, d := range t.domains {
		if len(d.rows) > 0 {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// atomCount is total_atoms: every non-secret atom, superseded ones included.
func (t *tenant) atomCount() int {
	n := len(t.atoms)
	for _, d := range t.domains {
		n -= d.secrets
	}
	return n
}
