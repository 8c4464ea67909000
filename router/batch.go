package router

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
)

const (
	maxBatchItems  = 500
	idempotencyTTL = 24 * time.Hour
	roomOnV2Msg    = "xroom: rooms are only supported on the v2 memory API (/memory/write, /memory/read)."
)

type batchRequest struct {
	Items []writeRequest `json:"items"`
}

type batchItemJSON struct {
	Index      int     `json:"index"`
	Stored     bool    `json:"stored"`
	AtomID     *string `json:"atom_id"`
	Importance float64 `json:"importance"`
	Reason     string  `json:"reason"`
	Error      any     `json:"error"`
}

type batchResultJSON struct {
	TotalCount  int             `json:"total_count"`
	StoredCount int             `json:"stored_count"`
	Results     []batchItemJSON `json:"results"`
}

// validateBatch applies the whole-request rules of interface §4.2: any
// invalid item fails the request (400), supersedes on a batch route is a 422.
// allowRooms is true for write_batch, whose items may address rooms.
func validateBatch(req *batchRequest, allowRooms bool) ([]prepared, *apiError) {
	v := &validator{}
	switch {
	case req.Items == nil:
		v.add("missing", "Field required", "items")
	case len(req.Items) == 0:
		v.add("too_short", "List should have at least 1 item after validation, not 0", "items")
	case len(req.Items) > maxBatchItems:
		v.add("too_long", fmt.Sprintf("List should have at most %d items after validation, not %d", maxBatchItems, len(req.Items)), "items")
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	items := make([]prepared, len(req.Items))
	withSupersedes := -1
	for i := range req.Items {
		r := req.Items[i]
		if len(r.Supersedes) > 0 && withSupersedes < 0 {
			withSupersedes = i
		}
		r.Supersedes = nil
		items[i] = validateItem(v, &r, []any{"items", i}, allowRooms)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	if withSupersedes >= 0 {
		e := newError(422, codeValidation, "supersedes is not supported on batch routes; use POST /memory/write")
		return nil, e.with("errors", []fieldError{fieldErr("value_error",
			"supersedes is not supported on batch routes", "items", withSupersedes, "supersedes")})
	}
	return items, nil
}

// writeBatchHyphen is POST /memory/write-batch: idempotent, private domains.
func (s *Server) writeBatchHyphen(c *call) error {
	return s.writeBatch(c, false)
}

// writeBatchUnderscore is POST /memory/write_batch: per-item domains, rooms
// allowed, no idempotency.
func (s *Server) writeBatchUnderscore(c *call) error {
	return s.writeBatch(c, true)
}

func (s *Server) writeBatch(c *call, underscore bool) error {
	body := c.ctx.PostBody()
	var req batchRequest
	if err := decodeBody(body, &req, true); err != nil {
		return err
	}
	items, verr := validateBatch(&req, underscore)
	if verr != nil {
		return verr
	}
	var idem *raftfsm.Idempotency
	if key := string(c.ctx.Request.Header.Peek("Idempotency-Key")); key != "" && !underscore {
		if len(key) > 255 {
			return validationError(fieldError{Loc: []any{"header", "Idempotency-Key"},
				Msg: "Idempotency-Key must be at most 255 characters", Type: "string_too_long"})
		}
		idem = &raftfsm.Idempotency{Key: key, BodyHash: sha256.Sum256(body),
			ExpiresAt: time.Now().Add(idempotencyTTL).UnixMicro()}
	}
	groups, err := s.resolveBatch(c, items)
	if err != nil {
		return err
	}
	// Every group is checked against the atom limit and embedded before the
	// first is written, so neither refusal leaves part of the batch written;
	// the caller's own group, the one apply may still refuse at the limit,
	// is written first.
	for _, g := range groups {
		if err := s.checkBatchLimit(c, g, idem); err != nil {
			return err
		}
	}
	for _, g := range groups {
		if err := s.prepare(c, g.items); err != nil {
			return err
		}
	}
	out := batchResultJSON{TotalCount: len(items), Results: make([]batchItemJSON, len(items))}
	for _, g := range groups {
		res, err := s.writeGroup(c, g, idem)
		if err != nil {
			return err
		}
		for j, r := range res.Results {
			out.Results[g.index[j]] = renderBatchItem(g.index[j], r)
		}
	}
	for _, r := range out.Results {
		if r.Stored {
			out.StoredCount++
		}
	}
	return s.ok(c, out)
}

// checkBatchLimit applies the atom limit to a group, except to the retry of
// an Idempotency-Key already answered: it stores nothing and must get the
// cached response (or the 409) even when the account is at its limit. A
// node without a replica of the group leaves both to apply, which replays
// a known key before it checks the limit.
func (s *Server) checkBatchLimit(c *call, g *batchGroup, idem *raftfsm.Idempotency) error {
	if idem != nil && c.settings.Plan.AtomLimit > 0 {
		fsm, err := s.backend.ReadFSM(c.std, g.tenant)
		if _, elsewhere := notHosted(err); elsewhere {
			return nil
		}
		if err != nil {
			return err
		}
		if fsm.KnownIdempotencyKey(g.tenant, idem.Key, time.Now().UnixMicro()) {
			return nil
		}
	}
	return s.checkAtomLimit(c, g.tenant, g.items)
}

// batchGroup is the items of one batch that go to one tenant.
type batchGroup struct {
	tenant string
	index  []int
	items  []*raftfsm.WriteItem
}

// resolveBatch resolves every item's domain to a tenant (the caller's org
// or a room it may write to) and groups items by tenant, in first-seen order.
func (s *Server) resolveBatch(c *call, items []prepared) ([]*batchGroup, error) {
	groups := []*batchGroup{{tenant: c.org}}
	byTenant := map[string]*batchGroup{c.org: groups[0]}
	for i := range items {
		tenant := c.org
		if items[i].isRoom {
			t, err := s.roomTenant(c, items[i].room, true)
			if err != nil {
				return nil, err
			}
			tenant = t
			items[i].item.Provenance = s.provenance(c, t, nil)
		}
		g := byTenant[tenant]
		if g == nil {
			g = &batchGroup{tenant: tenant}
			byTenant[tenant] = g
			groups = append(groups, g)
		}
		g.index = append(g.index, i)
		g.items = append(g.items, &items[i].item)
	}
	if len(groups[0].items) == 0 {
		groups = groups[1:] // no private item
	}
	return groups, nil
}

// writeGroup writes a group's prepared items.
func (s *Server) writeGroup(c *call, g *batchGroup, idem *raftfsm.Idempotency) (*raftfsm.WriteResults, error) {
	cmd := raftfsm.WriteCmd{Tenant: g.tenant, Batch: true, Idem: idem, Items: make([]raftfsm.WriteItem, len(g.items)),
		Limit: s.limitFor(c, g.tenant)}
	for i, it := range g.items {
		cmd.Items[i] = *it
	}
	res, err := s.proposeWrite(c, &cmd)
	if err != nil {
		return nil, err
	}
	if res.Err != nil {
		if errors.Is(res.Err, raftfsm.ErrConflict) && idem != nil {
			return nil, conflict("Idempotency-Key was already used with a different request body").
				with("reason", "idempotency_key_reused")
		}
		return nil, supersedeError(res.Err, cmd.Limit)
	}
	return res, nil
}

func renderBatchItem(index int, r raftfsm.WriteResult) batchItemJSON {
	w := renderWriteResult(r)
	reason := w.Reason
	if r.Stored {
		reason = ""
	}
	return batchItemJSON{Index: index, Stored: w.Stored, AtomID: w.AtomID, Importance: w.Importance, Reason: reason}
}
