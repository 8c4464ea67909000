package raftfsm

// AtomType is the kind of a stored atom.
type AtomType uint8

// Atom types of the interface (§2.1).
const (
	Episode AtomType = iota
	Prototype
	Singleton
	Secret
)

// String returns the interface's name of the type.
func (t AtomType) String() string {
	switch t {
	case Prototype:
		return "prototype"
	case Singleton:
		return "singleton"
	case Secret:
		return "secret"
	default:
		return "episode"
	}
}

// Provenance is the authorship record of a room atom.
type Provenance struct {
	Principal  string
	Agent      string
	ClientEnv  string
	IsExternal bool
	RecordedAt int64 // unix microseconds
}

// Atom is one stored memory. Slices are never mutated after insert, so a
// shallow copy taken under the read lock is a safe snapshot for callers.
type Atom struct {
	// First the fields every search stage reads for each posting or row it
	// visits (visible, weights, ties): one cache line of the atom. The
	// rest is read only for the atoms a search returns.
	SupersededBy ID // zero while the atom is the live tip
	MergedInto   ID // the prototype that absorbed this episode; zero when none
	ID           ID
	Valence      float64
	slot         int32 // row in the domain arena; -1 for secrets
	Type         AtomType

	Content        string
	Concepts       []string
	Domain         string
	Metadata       []byte // raw JSON object, nil when none
	Fingerprint    string
	ExternalRef    string
	Importance     float64
	Supersedes     []ID
	CreatedAt      int64 // unix microseconds
	AccessCount    int64
	LastAccessedAt int64 // unix microseconds, 0 when never accessed
	Provenance     *Provenance
	Sealed         []byte // secrets only: the sealed value
}

// Superseded reports whether a successor replaced the atom.
func (a *Atom) Superseded() bool { return !a.SupersededBy.IsZero() }

func (e *enc) atom(a *Atom) {
	e.id(a.ID)
	e.str(a.Content)
	e.strs(a.Concepts)
	e.str(a.Domain)
	e.bytes(a.Metadata)
	e.str(a.Fingerprint)
	e.str(a.ExternalRef)
	e.f64(a.Importance)
	e.f64(a.Valence)
	e.u8(uint8(a.Type))
	e.ids(a.Supersedes)
	e.id(a.SupersededBy)
	e.varint(a.CreatedAt)
	e.varint(a.AccessCount)
	e.varint(a.LastAccessedAt)
	e.provenance(a.Provenance)
	e.bytes(a.Sealed)
	e.id(a.MergedInto)
}

// atomOf decodes an atom of tenant t's snapshot: its concepts are t's
// interned names, and its domain the name of t's domain when t has it, so
// that neither is a fresh string the index drops (7 million concept
// strings at a million atoms).
func (d *dec) atomOf(t *tenant) *Atom {
	a := &Atom{slot: -1}
	a.ID = d.id()
	a.Content = d.str()
	a.Concepts = d.interned(&t.edges.concepts)
	a.Domain = t.domainName(d.view())
	a.Metadata = d.bytes()
	a.Fingerprint = d.str()
	a.ExternalRef = d.str()
	a.Importance = d.f64()
	a.Valence = d.f64()
	a.Type = AtomType(d.u8())
	a.Supersedes = d.ids()
	a.SupersededBy = d.id()
	a.CreatedAt = d.varint()
	a.AccessCount = d.varint()
	a.LastAccessedAt = d.varint()
	a.Provenance = d.provenance()
	a.Sealed = d.bytes()
	a.MergedInto = d.id()
	return a
}

func (e *enc) provenance(p *Provenance) {
	if p == nil {
		e.u8(0)
		return
	}
	e.u8(1)
	e.str(p.Principal)
	e.str(p.Agent)
	e.str(p.ClientEnv)
	e.bool(p.IsExternal)
	e.varint(p.RecordedAt)
}

func (d *dec) provenance() *Provenance {
	if d.u8() == 0 {
		return nil
	}
	return &Provenance{
		Principal:  d.str(),
		Agent:      d.str(),
		ClientEnv:  d.str(),
		IsExternal: d.bool(),
		RecordedAt: d.varint(),
	}
}
