package raftfsm

import (
	"math"
	"sort"
	"strings"
)

// idemRecord is the first outcome of an Idempotency-Key, kept until it
// expires (24 h, decided by the router and carried in the command).
type idemRecord struct {
	key       string
	hash      [32]byte
	expiresAt int64
	results   []byte // packResults of the outcome
}

// replayOrConflict answers a retried key: nil when the key is new.
func (t *tenant) replayOrConflict(c *WriteCmd, now int64) *WriteResults {
	t.pruneIdem(now)
	rec := t.idem[c.Idem.Key]
	if rec == nil {
		return nil
	}
	if rec.hash != c.Idem.BodyHash {
		return &WriteResults{Err: &ApplyError{Kind: ErrConflict,
			Message: "Idempotency-Key was already used with a different request body"}}
	}
	return &WriteResults{Results: unpackResults(rec.results), Replayed: true}
}

// KnownIdempotencyKey reports whether the tenant holds a record of key
// that has not expired at now (unix microseconds): a write carrying it is
// answered from the record (replay or conflict) and stores nothing.
func (f *FSM) KnownIdempotencyKey(tenantID, key string, now int64) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t := f.tenants[tenantID]
	if t == nil {
		return false
	}
	r := t.idem[key]
	return r != nil && r.expiresAt > now
}

func (t *tenant) remember(c *WriteCmd, res *WriteResults) {
	if c.Idem == nil || res.Err != nil {
		return
	}
	t.addIdem(&idemRecord{key: c.Idem.Key, hash: c.Idem.BodyHash,
		expiresAt: c.Idem.ExpiresAt, results: packResults(res.Results)})
}

// addIdem records r, replacing any record of its key.
func (t *tenant) addIdem(r *idemRecord) {
	t.idem[r.key] = r
	t.idemExpiry.push(r)
}

// pruneIdem drops the records expired at now, which comes from the
// command: those at the front of the expiry heap. Expiry times come from
// the routers' clocks, so they do not follow the log's order; the heap
// drops exactly the records a scan of them all would. A record replaced
// under its key (remember of a write with no item) leaves its entry, which
// drops nothing when it comes out.
func (t *tenant) pruneIdem(now int64) {
	h := &t.idemExpiry
	for len(*h) > 0 && (*h)[0].expiresAt <= now {
		r := h.pop()
		if t.idem[r.key] == r {
			delete(t.idem, r.key)
		}
	}
}

// idemHeap is a tenant's records by expiry, the first to expire at the
// root; the order among equal times is of no consequence.
type idemHeap []*idemRecord

func (h *idemHeap) push(r *idemRecord) {
	*h = append(*h, r)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].expiresAt <= s[i].expiresAt {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *idemHeap) pop() *idemRecord {
	s := *h
	r := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s[n] = nil
	s = s[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && s[c+1].expiresAt < s[c].expiresAt {
			c++
		}
		if s[i].expiresAt <= s[c].expiresAt {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return r
}

func (t *tenant) sortedIdem() []*idemRecord {
	out := make([]*idemRecord, 0, len(t.idem))
	for _, r := range t.idem {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// A record's results are packed: per result a flags byte, then the atom ID
// unless zero, the importance unless its bits are zero, the reason's
// payload and the superseded IDs unless nil. The reasons apply gives are
// a code, a duplicate's the near atom's ID; any other is kept as text. A
// duplicate item's result packs to 18 bytes instead of ~170 held as a
// WriteResult and its reason string.
const (
	packStored     = 1 << 0
	packAtomID     = 1 << 1
	packImportance = 1 << 2
	packNilSup     = 1 << 3
	packReasonBits = 4 // the reason code is flags >> packReasonBits
)

// Reason codes.
const (
	reasonText      = iota // the text follows
	reasonDuplicate        // the near atom's ID follows (duplicateReason)
	reasonEmpty
	reasonStored
	reasonReplaced
	reasonRefExists
	reasonSecretMismatch
)

// Reasons apply gives.
const (
	reasonStoredText    = "stored"
	reasonReplacedText  = "replaced"
	reasonRefExistsText = "external_ref exists"
	duplicatePrefix     = "duplicate of "
	duplicateSuffix     = ": the embedder cannot tell it apart"
)

var reasonTexts = [...]string{reasonEmpty: "", reasonStored: reasonStoredText, reasonReplaced: reasonReplacedText,
	reasonRefExists: reasonRefExistsText, reasonSecretMismatch: ReasonSecretIDMismatch}

// duplicateReason is the reason of an item refused as a duplicate of near.
func duplicateReason(near ID) string {
	return string(appendDuplicateReason(make([]byte, 0, len(duplicatePrefix)+36+len(duplicateSuffix)), near))
}

func appendDuplicateReason(b []byte, near ID) []byte {
	b = append(b, duplicatePrefix...)
	s := near.canonical()
	b = append(b, s[:]...)
	return append(b, duplicateSuffix...)
}

// reasonCode returns the code of reason and, for a duplicate's, the near
// atom's ID: only a reason duplicateReason gives back byte for byte.
func reasonCode(reason string) (int, ID) {
	for code, s := range reasonTexts {
		if code != reasonText && code != reasonDuplicate && reason == s {
			return code, ID{}
		}
	}
	if mid, ok := strings.CutPrefix(reason, duplicatePrefix); ok {
		if mid, ok = strings.CutSuffix(mid, duplicateSuffix); ok {
			if id, ok := parseCanonicalID(mid); ok {
				return reasonDuplicate, id
			}
		}
	}
	return reasonText, ID{}
}

// parseCanonicalID parses s if it is what ID.String gives: 36 characters,
// lowercase hex in groups of 8-4-4-4-12.
func parseCanonicalID(s string) (ID, bool) {
	var id ID
	if len(s) != 36 {
		return id, false
	}
	n := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return id, false
			}
			i++
			continue
		}
		hi, ok1 := lowerHex(s[i])
		lo, ok2 := lowerHex(s[i+1])
		if !ok1 || !ok2 {
			return id, false
		}
		id[n] = hi<<4 | lo
		n++
		i += 2
	}
	return id, true
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func packResults(results []WriteResult) []byte {
	e := enc{b: make([]byte, 0, 2+len(results)*(1+16+8+1))}
	if results != nil {
		e.uvarint(uint64(len(results)) + 1)
	} else {
		e.uvarint(0)
	}
	for i := range results {
		w := &results[i]
		code, near := reasonCode(w.Reason)
		flags := uint8(code) << packReasonBits
		if w.Stored {
			flags |= packStored
		}
		if !w.AtomID.IsZero() {
			flags |= packAtomID
		}
		if math.Float64bits(w.Importance) != 0 {
			flags |= packImportance
		}
		if w.Superseded == nil {
			flags |= packNilSup
		}
		e.u8(flags)
		if flags&packAtomID != 0 {
			e.id(w.AtomID)
		}
		if flags&packImportance != 0 {
			e.f64(w.Importance)
		}
		switch code {
		case reasonText:
			e.str(w.Reason)
		case reasonDuplicate:
			e.id(near)
		}
		if w.Superseded != nil {
			e.ids(w.Superseded)
		}
	}
	return append([]byte(nil), e.b...)
}

// packedLen returns how many results p holds, -1 for nil results.
func packedLen(p []byte) int {
	d := &dec{b: p}
	return int(d.uvarint()) - 1
}

// eachPacked calls fn with each packed result in order; a duplicate's has
// no Reason but dup set and its near atom's ID.
func eachPacked(p []byte, fn func(w *WriteResult, dup bool, near ID)) {
	d := &dec{b: p}
	n := int(d.uvarint()) - 1
	for range n {
		flags := d.u8()
		var w WriteResult
		w.Stored = flags&packStored != 0
		if flags&packAtomID != 0 {
			w.AtomID = d.id()
		}
		if flags&packImportance != 0 {
			w.Importance = d.f64()
		}
		var near ID
		code := int(flags >> packReasonBits)
		switch code {
		case reasonText:
			w.Reason = d.str()
		case reasonDuplicate:
			near = d.id()
		default:
			w.Reason = reasonTexts[code]
		}
		if flags&packNilSup == 0 {
			w.Superseded = d.ids()
			if w.Superseded == nil {
				w.Superseded = []ID{}
			}
		}
		fn(&w, code == reasonDuplicate, near)
	}
	if d.err != nil || len(d.b) != 0 {
		panic("raftfsm: malformed packed idempotency results")
	}
}

func unpackResults(p []byte) []WriteResult {
	n := packedLen(p)
	if n < 0 {
		return nil
	}
	out := make([]WriteResult, 0, n)
	var reasons map[ID]string // a batch's duplicates share a few near atoms
	eachPacked(p, func(w *WriteResult, dup bool, near ID) {
		if dup {
			if reasons == nil {
				reasons = make(map[ID]string)
			}
			if w.Reason = reasons[near]; w.Reason == "" {
				w.Reason = duplicateReason(near)
				reasons[near] = w.Reason
			}
		}
		out = append(out, *w)
	})
	return out
}

// idemRecord encodes r as snapshots hold it: the results in full.
func (e *enc) idemRecord(r *idemRecord) {
	e.str(r.key)
	e.b = append(e.b, r.hash[:]...)
	e.varint(r.expiresAt)
	e.uvarint(uint64(max(packedLen(r.results), 0)))
	eachPacked(r.results, func(w *WriteResult, dup bool, near ID) {
		e.bool(w.Stored)
		e.id(w.AtomID)
		e.f64(w.Importance)
		if dup {
			e.uvarint(uint64(len(duplicatePrefix) + 36 + len(duplicateSuffix)))
			e.b = appendDuplicateReason(e.b, near)
		} else {
			e.str(w.Reason)
		}
		e.ids(w.Superseded)
	})
}

// idemRecord decodes a record as snapshots hold it (enc.idemRecord).
func (d *dec) idemRecord() *idemRecord {
	r := &idemRecord{key: d.str()}
	a, b := d.id(), d.id()
	copy(r.hash[:16], a[:])
	copy(r.hash[16:], b[:])
	r.expiresAt = d.varint()
	n := d.count(1)
	results := make([]WriteResult, n)
	for i := range results {
		results[i] = WriteResult{Stored: d.bool(), AtomID: d.id(), Importance: d.f64(),
			Reason: d.str(), Superseded: d.ids()}
		if results[i].Superseded == nil {
			results[i].Superseded = []ID{}
		}
	}
	r.results = packResults(results)
	return r
}
