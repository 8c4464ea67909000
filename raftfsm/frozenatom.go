package raftfsm

// frozenAtom is an atom as a snapshot sees it. Apply changes few fields of
// a stored atom in place: supersession, merging into a prototype, the type
// (consolidation), valence (feedback), the access counts (touch), and a
// secret's value, replaced whole. A freeze copies those and keeps a pointer
// for the rest, which never change once the atom is indexed; so freezing
// reads an atom's first cache line and its counters instead of copying
// all of it (DESIGN notes, "Snapshots").
type frozenAtom struct {
	a              *Atom
	supersededBy   ID
	mergedInto     ID
	valence        float64
	accessCount    int64
	lastAccessedAt int64
	typ            AtomType
	secret         *secretValue // a secret's value; nil for other atoms
}

// secretValue is what replacing a secret rewrites.
type secretValue struct {
	content string
	sealed  []byte
}

func freezeAtom(a *Atom) frozenAtom {
	fa := frozenAtom{a: a, supersededBy: a.SupersededBy, mergedInto: a.MergedInto, valence: a.Valence,
		accessCount: a.AccessCount, lastAccessedAt: a.LastAccessedAt, typ: a.Type}
	if a.Type == Secret {
		fa.secret = &secretValue{content: a.Content, sealed: a.Sealed}
	}
	return fa
}

// atom returns the atom as it was frozen. It reads only fields apply never
// writes after indexing, so it may run while applies go on.
func (fa *frozenAtom) atom() Atom {
	a := fa.a
	x := Atom{ID: a.ID, Concepts: a.Concepts, Domain: a.Domain, Metadata: a.Metadata,
		Fingerprint: a.Fingerprint, ExternalRef: a.ExternalRef, Importance: a.Importance,
		Supersedes: a.Supersedes, CreatedAt: a.CreatedAt, Provenance: a.Provenance,
		SupersededBy: fa.supersededBy, MergedInto: fa.mergedInto, Valence: fa.valence,
		AccessCount: fa.accessCount, LastAccessedAt: fa.lastAccessedAt, Type: fa.typ}
	if fa.secret != nil {
		x.Content, x.Sealed = fa.secret.content, fa.secret.sealed
	} else {
		x.Content = a.Content // a secret's is rewritten; no other atom's is
	}
	return x
}
