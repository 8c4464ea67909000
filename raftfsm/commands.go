package raftfsm

import "fmt"

// Command types: the first byte of every command.
const (
	cmdWrite        uint8 = 1
	cmdTouch        uint8 = 2
	cmdFeedback     uint8 = 3
	cmdDeleteAtom   uint8 = 4
	cmdDeleteDomain uint8 = 5
	cmdReset        uint8 = 6
	cmdConsolidate  uint8 = 7
	cmdRoom         uint8 = 8
	cmdChat         uint8 = 9
)

// WriteItem is one atom to store, fully prepared by the router: ID,
// timestamp, concepts and vector are decided before proposal.
type WriteItem struct {
	ID          ID
	CreatedAt   int64 // unix microseconds; apply keeps it strictly increasing per tenant
	Content     string
	Concepts    []string
	Domain      string
	Metadata    []byte
	Fingerprint string
	ExternalRef string
	Supersedes  []ID
	Provenance  *Provenance
	Type        AtomType
	Sealed      []byte
	Vector      []float32
	// KeepContent, on a secret, keeps the alias's stored content (the
	// context) when the alias exists: the request gave none. Decided in
	// apply, so two saves at once cannot undo each other's context.
	KeepContent bool
}

// WriteCmd stores one atom (Batch false) or a batch of them as one entry.
// Supersedes are honoured on single writes only.
type WriteCmd struct {
	Tenant string
	Batch  bool
	Items  []WriteItem
	Idem   *Idempotency // write-batch with an Idempotency-Key
	// Limit is the account's atom limit (0: none), enforced here so that
	// concurrent writes through any node cannot pass it.
	Limit int64
}

// Idempotency identifies a retried request: the same Key with the same
// BodyHash replays the first results; another body is a conflict.
type Idempotency struct {
	Key       string
	BodyHash  [32]byte
	ExpiresAt int64 // unix microseconds
}

// WriteResult is the outcome of one item, as interface §2.2 reports it.
type WriteResult struct {
	Stored     bool
	AtomID     ID // zero when filtered
	Importance float64
	Reason     string
	Superseded []ID
}

// WriteResults is the apply result of a WriteCmd. Err is set when a single
// write's supersede validation failed: then nothing was stored.
type WriteResults struct {
	Results  []WriteResult
	Err      *ApplyError
	Replayed bool // an idempotent retry: Results are the first request's
}

// TouchCmd records accesses of atoms returned by reads.
type TouchCmd struct {
	Tenant string
	IDs    []ID
	At     int64
}

// FeedbackCmd applies outcome feedback (interface §4.6).
type FeedbackCmd struct {
	Tenant        string
	IDs           []ID
	Outcome       float64
	Concepts      []string
	QueryConcepts []string
	At            int64
}

// FeedbackResult is the apply result of a FeedbackCmd.
type FeedbackResult struct {
	Updated           int
	AvgValence        float64
	CoactivationEdges int
}

// DeleteAtomCmd removes one atom.
type DeleteAtomCmd struct {
	Tenant string
	ID     ID
}

// DeleteAtomResult is the apply result of a DeleteAtomCmd.
type DeleteAtomResult struct {
	Deleted                int
	PredecessorsLeftHidden []ID
	HistoryDestroyed       bool
	Err                    *ApplyError
}

// DeleteDomainCmd removes every non-secret atom of a domain.
type DeleteDomainCmd struct {
	Tenant string
	Domain string
}

// DeleteDomainResult is the apply result of a DeleteDomainCmd.
type DeleteDomainResult struct {
	Deleted         int
	SkippedSecrets  int
	LeftHiddenCount int
	Err             *ApplyError
}

// ResetCmd truncates every tenant of the group.
type ResetCmd struct{}

// Encode returns the command bytes of c.
func (c *WriteCmd) Encode() []byte {
	e := enc{b: make([]byte, 0, 64+len(c.Items)*(2048))}
	e.u8(cmdWrite)
	e.str(c.Tenant)
	e.bool(c.Batch)
	e.uvarint(uint64(len(c.Items)))
	for i := range c.Items {
		it := &c.Items[i]
		e.id(it.ID)
		e.varint(it.CreatedAt)
		e.str(it.Content)
		e.strs(it.Concepts)
		e.str(it.Domain)
		e.bytes(it.Metadata)
		e.str(it.Fingerprint)
		e.str(it.ExternalRef)
		e.ids(it.Supersedes)
		e.provenance(it.Provenance)
		e.u8(uint8(it.Type))
		e.bytes(it.Sealed)
		e.f32s(it.Vector)
	}
	if c.Idem == nil {
		e.u8(0)
	} else {
		e.u8(1)
		e.str(c.Idem.Key)
		e.b = append(e.b, c.Idem.BodyHash[:]...)
		e.varint(c.Idem.ExpiresAt)
	}
	e.varint(c.Limit)
	// Trailing, and only when some item keeps its content: the items'
	// indexes.
	var keep []uint64
	for i := range c.Items {
		if c.Items[i].KeepContent {
			keep = append(keep, uint64(i))
		}
	}
	if len(keep) > 0 {
		e.uvarint(uint64(len(keep)))
		for _, i := range keep {
			e.uvarint(i)
		}
	}
	return e.b
}

func decodeWrite(d *dec) *WriteCmd {
	c := &WriteCmd{Tenant: d.str(), Batch: d.bool()}
	n := d.count(16) // every item starts with its 16-byte ID
	c.Items = make([]WriteItem, n)
	for i := range c.Items {
		it := &c.Items[i]
		it.ID = d.id()
		it.CreatedAt = d.varint()
		it.Content = d.str()
		it.Concepts = d.strs()
		it.Domain = d.str()
		it.Metadata = d.bytes()
		it.Fingerprint = d.str()
		it.ExternalRef = d.str()
		it.Supersedes = d.ids()
		it.Provenance = d.provenance()
		it.Type = AtomType(d.u8())
		it.Sealed = d.bytes()
		it.Vector = d.f32s()
	}
	// Fields added after the first release are trailing and optional: a log
	// written by an older version ends before them and decodes with defaults.
	if len(d.b) > 0 && d.u8() == 1 {
		c.Idem = &Idempotency{Key: d.str()}
		h1, h2 := d.id(), d.id()
		copy(c.Idem.BodyHash[:16], h1[:])
		copy(c.Idem.BodyHash[16:], h2[:])
		c.Idem.ExpiresAt = d.varint()
	}
	if len(d.b) > 0 {
		c.Limit = d.varint()
	}
	if len(d.b) > 0 {
		for range d.count(1) {
			if i := d.uvarint(); i < uint64(len(c.Items)) {
				c.Items[i].KeepContent = true
			} else {
				d.fail("item index")
			}
		}
	}
	return c
}

// Encode returns the command bytes of c.
func (c *TouchCmd) Encode() []byte {
	e := enc{}
	e.u8(cmdTouch)
	e.str(c.Tenant)
	e.ids(c.IDs)
	e.varint(c.At)
	return e.b
}

func decodeTouch(d *dec) *TouchCmd {
	return &TouchCmd{Tenant: d.str(), IDs: d.ids(), At: d.varint()}
}

// Encode returns the command bytes of c.
func (c *FeedbackCmd) Encode() []byte {
	e := enc{}
	e.u8(cmdFeedback)
	e.str(c.Tenant)
	e.ids(c.IDs)
	e.f64(c.Outcome)
	e.strs(c.Concepts)
	e.strs(c.QueryConcepts)
	e.varint(c.At)
	return e.b
}

func decodeFeedback(d *dec) *FeedbackCmd {
	return &FeedbackCmd{Tenant: d.str(), IDs: d.ids(), Outcome: d.f64(),
		Concepts: d.strs(), QueryConcepts: d.strs(), At: d.varint()}
}

// Encode returns the command bytes of c.
func (c *DeleteAtomCmd) Encode() []byte {
	e := enc{}
	e.u8(cmdDeleteAtom)
	e.str(c.Tenant)
	e.id(c.ID)
	return e.b
}

// Encode returns the command bytes of c.
func (c *DeleteDomainCmd) Encode() []byte {
	e := enc{}
	e.u8(cmdDeleteDomain)
	e.str(c.Tenant)
	e.str(c.Domain)
	return e.b
}

// Encode returns the command bytes of c.
func (c *ResetCmd) Encode() []byte { return []byte{cmdReset} }

// decodeCommand turns command bytes into a typed command. It panics on
// anything it cannot decode: only hebb writes commands, so that is a bug.
// Commands evolve by appending optional trailing fields (see decodeWrite), so
// a log written by an older version keeps replaying.
func decodeCommand(b []byte) any {
	if len(b) == 0 {
		panic("raftfsm: empty command")
	}
	d := &dec{b: b[1:]}
	var c any
	switch b[0] {
	case cmdWrite:
		c = decodeWrite(d)
	case cmdTouch:
		c = decodeTouch(d)
	case cmdFeedback:
		c = decodeFeedback(d)
	case cmdDeleteAtom:
		c = &DeleteAtomCmd{Tenant: d.str(), ID: d.id()}
	case cmdDeleteDomain:
		c = &DeleteDomainCmd{Tenant: d.str(), Domain: d.str()}
	case cmdReset:
		c = &ResetCmd{}
	case cmdRoom:
		c = decodeRoom(d)
	case cmdChat:
		c = decodeChat(d)
	case cmdConsolidate:
		c = &ConsolidateCmd{Tenant: d.str(), Domain: d.str(), At: d.varint(), BaseID: d.id()}
	default:
		panic(fmt.Sprintf("raftfsm: unknown command type %d", b[0]))
	}
	if d.err != nil {
		panic(fmt.Sprintf("raftfsm: cannot decode command type %d: %v", b[0], d.err))
	}
	return c
}
