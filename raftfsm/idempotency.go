package raftfsm

import (
	"sort"
)

// idemRecord is the first outcome of an Idempotency-Key, kept until it
// expires (24 h, decided by the router and carried in the command).
type idemRecord struct {
	key       string
	hash      [32]byte
	expiresAt int64
	results   []WriteResult
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
	return &WriteResults{Results: rec.results, Replayed: true}
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
	t.idem[c.Idem.Key] = &idemRecord{key: c.Idem.Key, hash: c.Idem.BodyHash,
		expiresAt: c.Idem.ExpiresAt, results: res.Results}
}

// pruneIdem drops expired records; now comes from the command.
func (t *tenant) pruneIdem(now int64) {
	for k, r := range t.idem {
		if r.expiresAt <= now {
			delete(t.idem, k)
		}
	}
}

func (t *tenant) sortedIdem() []*idemRecord {
	out := make([]*idemRecord, 0, len(t.idem))
	for _, r := range t.idem {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

func (e *enc) idemRecord(r *idemRecord) {
	e.str(r.key)
	e.b = append(e.b, r.hash[:]...)
	e.varint(r.expiresAt)
	e.uvarint(uint64(len(r.results)))
	for _, w := range r.results {
		e.bool(w.Stored)
		e.id(w.AtomID)
		e.f64(w.Importance)
		e.str(w.Reason)
		e.ids(w.Superseded)
	}
}

func (d *dec) idemRecord() *idemRecord {
	r := &idemRecord{key: d.str()}
	a, b := d.id(), d.id()
	copy(r.hash[:16], a[:])
	copy(r.hash[16:], b[:])
	r.expiresAt = d.varint()
	n := d.count(1)
	r.results = make([]WriteResult, n)
	for i := range r.results {
		r.results[i] = WriteResult{Stored: d.bool(), AtomID: d.id(), Importance: d.f64(),
			Reason: d.str(), Superseded: d.ids()}
		if r.results[i].Superseded == nil {
			r.results[i].Superseded = []ID{}
		}
	}
	return r
}
