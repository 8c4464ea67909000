package raftfsm

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// refIdem is the idempotency table as it was: the full results of every
// record, and every keyed write scanning the whole table for expired ones.
type refIdem struct {
	recs map[string]*refIdemRecord
}

type refIdemRecord struct {
	key       string
	hash      [32]byte
	expiresAt int64
	results   []WriteResult
}

func (s *refIdem) replayOrConflict(c *WriteCmd, now int64) *WriteResults {
	for k, r := range s.recs {
		if r.expiresAt <= now {
			delete(s.recs, k)
		}
	}
	rec := s.recs[c.Idem.Key]
	if rec == nil {
		return nil
	}
	if rec.hash != c.Idem.BodyHash {
		return &WriteResults{Err: &ApplyError{Kind: ErrConflict,
			Message: "Idempotency-Key was already used with a different request body"}}
	}
	return &WriteResults{Results: rec.results, Replayed: true}
}

func (s *refIdem) remember(c *WriteCmd, res *WriteResults) {
	if c.Idem == nil || res.Err != nil {
		return
	}
	s.recs[c.Idem.Key] = &refIdemRecord{key: c.Idem.Key, hash: c.Idem.BodyHash,
		expiresAt: c.Idem.ExpiresAt, results: res.Results}
}

// refDecode is restore as it was: the table of a snapshot, superseded
// lists never nil.
func refDecode(b []byte) *refIdem {
	s := &refIdem{recs: make(map[string]*refIdemRecord)}
	d := &dec{b: b}
	n := d.count(1)
	for range n {
		r := &refIdemRecord{key: d.str()}
		a, b := d.id(), d.id()
		copy(r.hash[:16], a[:])
		copy(r.hash[16:], b[:])
		r.expiresAt = d.varint()
		r.results = make([]WriteResult, d.count(1))
		for i := range r.results {
			r.results[i] = WriteResult{Stored: d.bool(), AtomID: d.id(), Importance: d.f64(),
				Reason: d.str(), Superseded: d.ids()}
			if r.results[i].Superseded == nil {
				r.results[i].Superseded = []ID{}
			}
		}
		s.recs[r.key] = r
	}
	return s
}

func (s *refIdem) known(key string, now int64) bool {
	r := s.recs[key]
	return r != nil && r.expiresAt > now
}

// encode is the table as snapshots held it.
func (s *refIdem) encode() []byte {
	out := make([]*refIdemRecord, 0, len(s.recs))
	for _, r := range s.recs {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	e := enc{}
	e.uvarint(uint64(len(out)))
	for _, r := range out {
		e.str(r.key)
		e.b = append(e.b, r.hash[:]...)
		e.varint(r.expiresAt)
		e.uvarint(uint64(len(r.results)))
		for _, w := range r.results {
			encodeResult(&e, w)
		}
	}
	return e.b
}

func encodeResult(e *enc, w WriteResult) {
	e.bool(w.Stored)
	e.id(w.AtomID)
	e.f64(w.Importance)
	e.str(w.Reason)
	e.ids(w.Superseded)
}

// encodeIdem is the tenant's table as a snapshot holds it.
func encodeIdem(t *tenant) []byte {
	e := enc{}
	idem := t.sortedIdem()
	e.uvarint(uint64(len(idem)))
	for _, r := range idem {
		e.idemRecord(r)
	}
	return e.b
}

// decodeIdem gives a fresh tenant the table of a snapshot, as restore does.
func decodeIdem(b []byte) *tenant {
	t := newTenant("t", nil)
	d := &dec{b: b}
	n := d.count(1)
	for range n {
		t.addIdem(d.idemRecord())
	}
	if d.err != nil || len(d.b) != 0 {
		panic("cannot decode the table")
	}
	return t
}

// randomResults returns results of every kind apply gives and some it
// does not: reasons that look like a duplicate's but are not its bytes,
// nil and empty superseded lists, a negative zero importance.
func randomResults(rng *rand.Rand, n int) []WriteResult {
	if n == 0 && rng.IntN(2) == 0 {
		return nil
	}
	id := func() ID {
		var x ID
		if rng.IntN(5) != 0 {
			for i := range x {
				x[i] = byte(rng.IntN(256))
			}
		}
		return x
	}
	out := make([]WriteResult, n)
	for i := range out {
		w := WriteResult{Stored: rng.IntN(2) == 0, AtomID: id(), Superseded: []ID{}}
		switch rng.IntN(4) {
		case 0:
			w.Importance = rng.Float64()
		case 1:
			w.Importance = math.Copysign(0, -1)
		case 2:
			w.Importance = 1
		}
		near := id()
		w.Reason = []string{"", reasonStoredText, reasonReplacedText, reasonRefExistsText, ReasonSecretIDMismatch,
			fmt.Sprintf("duplicate of %s: the embedder cannot tell it apart", near),
			fmt.Sprintf("duplicate of %s: the embedder cannot tell it apart", near),
			"duplicate of " + strings.ToUpper(near.String()) + ": the embedder cannot tell it apart",
			fmt.Sprintf("duplicate of %s: the embedder cannot tell it apart!", near),
			fmt.Sprintf("duplicate of %s", near), "duplicate of : the embedder cannot tell it apart",
			"stored ", "other \x00 reason"}[rng.IntN(13)]
		switch rng.IntN(4) {
		case 0:
			w.Superseded = nil
		case 1:
			w.Superseded = []ID{id(), id()}
		}
		out[i] = w
	}
	return out
}

// sameResults compares answers as the old code's, bit for bit: slices nil
// or not, and importance bits (reflect.DeepEqual takes -0 for 0).
func sameResults(got, want *WriteResults) bool {
	if (got == nil) != (want == nil) {
		return false
	}
	if got == nil {
		return true
	}
	if !reflect.DeepEqual(got, want) {
		return false
	}
	g, w := enc{}, enc{}
	for i := range got.Results {
		encodeResult(&g, got.Results[i])
		encodeResult(&w, want.Results[i])
	}
	return bytes.Equal(g.b, w.b)
}

// TestIdempotencyMatchesScan drives the table and the old code's with the
// same keyed writes: few keys, so retries and conflicts; expiry and
// command times from routers whose clocks disagree, so records expire out
// of the order they were made; writes with no item (no pruning, and a
// record that replaces a live one); failed writes. Every answer, every
// KnownIdempotencyKey and the snapshot encoding must be the old code's,
// also on a table restored from a snapshot taken midway.
func TestIdempotencyMatchesScan(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 21))
			// The state and the old code's, then a restored pair.
			type pair struct {
				got *tenant
				ref *refIdem
			}
			pairs := []pair{{newTenant("t", nil), &refIdem{recs: make(map[string]*refIdemRecord)}}}
			clock := int64(1_000_000)
			keys := 20 + rng.IntN(200)
			replays, expired := 0, 0
			for step := range 6000 {
				clock += int64(rng.IntN(50))
				skew := int64(rng.IntN(400)) - 200 // the proposing router's clock
				key := fmt.Sprintf("k%d", rng.IntN(keys))
				c := &WriteCmd{Idem: &Idempotency{Key: key, ExpiresAt: clock + skew + 1000 + int64(rng.IntN(300))}}
				c.Idem.BodyHash[0] = byte(rng.IntN(2))
				items := rng.IntN(4)
				if rng.IntN(30) == 0 {
					items = 0
				}
				now := clock + skew
				if items > 0 {
					answered := false
					for i, p := range pairs {
						want := p.ref.replayOrConflict(c, now)
						if res := p.got.replayOrConflict(c, now); !sameResults(res, want) {
							t.Fatalf("step %d, table %d: key %s answered %+v, want %+v", step, i, key, res, want)
						}
						answered = want != nil
					}
					if answered {
						replays++
						continue
					}
				}
				res := &WriteResults{Results: randomResults(rng, items)}
				if rng.IntN(20) == 0 {
					res = &WriteResults{Err: &ApplyError{Kind: ErrLimit, Message: "limit"}}
				}
				probe := fmt.Sprintf("k%d", rng.IntN(keys))
				for _, p := range pairs {
					p.ref.remember(c, res)
					p.got.remember(c, res)
					if r := p.got.idem[probe]; r != nil && r.expiresAt <= now {
						expired++
					}
					at := now + int64(rng.IntN(1500))
					if k, w := p.got.knownKey(probe, at), p.ref.known(probe, at); k != w {
						t.Fatalf("step %d: known(%s, %d) = %v, want %v", step, probe, at, k, w)
					}
				}
				if step%50 == 0 || step == 5999 {
					for i, p := range pairs {
						if b, want := encodeIdem(p.got), p.ref.encode(); !bytes.Equal(b, want) {
							t.Fatalf("step %d, table %d: encodes differently (%d bytes, want %d)", step, i, len(b), len(want))
						}
					}
					if step == 3000 {
						b := pairs[0].ref.encode()
						pairs = append(pairs, pair{decodeIdem(b), refDecode(b)})
					}
				}
			}
			if replays == 0 || expired == 0 {
				t.Fatalf("%d replays, %d expired records probed: the test checks too little", replays, expired)
			}
		})
	}
}

// knownKey is KnownIdempotencyKey on the tenant.
func (t *tenant) knownKey(key string, now int64) bool {
	f := &FSM{tenants: map[string]*tenant{t.id: t}}
	return f.KnownIdempotencyKey(t.id, key, now)
}

// TestDuplicateReason checks the reason a duplicate gets against the
// format it had.
func TestDuplicateReason(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for range 1000 {
		var id ID
		for i := range id {
			id[i] = byte(rng.IntN(256))
		}
		want := fmt.Sprintf("duplicate of %s: the embedder cannot tell it apart", id)
		if got := duplicateReason(id); got != want {
			t.Fatalf("duplicateReason = %q, want %q", got, want)
		}
		if code, near := reasonCode(want); code != reasonDuplicate || near != id {
			t.Fatalf("reasonCode(%q) = %d, %v", want, code, near)
		}
		// Without the prefix it is some other text, kept as it is.
		other := strings.TrimPrefix(want, "duplicate of ")
		if code, _ := reasonCode(other); code != reasonText {
			t.Fatalf("reasonCode(%q) = %d, want it kept as text", other, code)
		}
	}
}
