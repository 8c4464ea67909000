package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hebbdb/hebb/raftfsm"
	"github.com/hebbdb/hebb/router/embedder"
)

// writeRequest is POST /memory/write and one item of the batch routes.
type writeRequest struct {
	Content     *string         `json:"content"`
	Concepts    []string        `json:"concepts"`
	Domain      *string         `json:"domain"`
	Metadata    json.RawMessage `json:"metadata"`
	Fingerprint *string         `json:"fingerprint"`
	ExternalRef *string         `json:"external_ref"`
	Supersedes  []string        `json:"supersedes"`
	Author      json.RawMessage `json:"author"`
}

type writeResultJSON struct {
	Stored     bool     `json:"stored"`
	AtomID     *string  `json:"atom_id"`
	Importance float64  `json:"importance"`
	Reason     string   `json:"reason"`
	Superseded []string `json:"superseded"`
}

// prepared is a validated write item before embedding.
type prepared struct {
	item   raftfsm.WriteItem
	room   string // room ID when the domain is a room address
	isRoom bool
}

// validateItem checks one write request; loc prefixes field locations. A
// route without rooms answers any room address, well-formed or not, with
// roomOnV2Msg alone (§7.3), as query and read-batch do.
func validateItem(v *validator, r *writeRequest, loc []any, rooms bool) prepared {
	at := func(f string) []any { return append(append([]any{}, loc...), f) }
	var p prepared
	if r.Content == nil {
		v.add("missing", "Field required", at("content")...)
	} else {
		v.strLen(*r.Content, 1, maxContent, at("content")...)
		p.item.Content = *r.Content
	}
	p.item.Concepts = v.concepts(r.Concepts, at("concepts")...)
	p.item.Domain = defaultDomain
	if r.Domain != nil && *r.Domain != "" {
		v.strLen(*r.Domain, 0, maxDomain, at("domain")...)
		kind, id, err := classifyDomain(*r.Domain)
		switch {
		case kind == domainRoom && !rooms:
			v.add("value_error", roomOnV2Msg, at("domain")...)
		case err != nil:
			v.errs = append(v.errs, relocate(err, at("domain"))...)
		}
		p.isRoom, p.room = kind == domainRoom, id
		p.item.Domain = *r.Domain
	}
	p.item.Metadata = v.metadata(r.Metadata, at("metadata")...)
	v.object(r.Author, at("author")...) // accepted and ignored on API-key calls (§4.1)
	if r.Fingerprint != nil {
		v.strLen(*r.Fingerprint, 0, maxFingerprint, at("fingerprint")...)
		p.item.Fingerprint = *r.Fingerprint
	}
	if r.ExternalRef != nil && *r.ExternalRef != "" {
		ref := *r.ExternalRef
		// The reserved prefix is reported alone: §4.1 gives it one entry.
		if strings.HasPrefix(ref, secretRefPref) {
			v.add("value_error", "external_ref must not start with 'secret:' (reserved for vault secrets)", at("external_ref")...)
		} else {
			v.strLen(ref, 1, maxExternalRef, at("external_ref")...)
		}
		p.item.ExternalRef = ref
	}
	if len(r.Supersedes) > 0 {
		p.item.Supersedes = v.uuids(r.Supersedes, maxSupersedes, at("supersedes")...)
		if p.isRoom {
			v.add("value_error", "supersedes is not supported on xroom: writes (room atoms cannot be superseded)", at("supersedes")...)
		}
	}
	return p
}

// relocate turns a domain error into field errors at loc; a non-validation
// error (403 for a reserved room ID) is kept for the caller via panic-free
// conversion into a value_error entry.
func relocate(e *apiError, loc []any) []fieldError {
	if errs, ok := e.Details["errors"].([]fieldError); ok {
		out := make([]fieldError, len(errs))
		for i, fe := range errs {
			out[i] = fieldError{Loc: append([]any{"body"}, loc...), Msg: fe.Msg, Type: fe.Type}
		}
		return out
	}
	return nil
}

func (s *Server) write(c *call) error {
	var req writeRequest
	if err := decodeBody(c.ctx.PostBody(), &req, true); err != nil {
		return err
	}
	v := &validator{}
	p := validateItem(v, &req, nil, true)
	if err := v.err(); err != nil {
		return err
	}
	tenant := c.org
	if p.isRoom {
		t, err := s.roomTenant(c, p.room, true)
		if err != nil {
			return err
		}
		tenant = t
		p.item.Provenance = s.provenance(c, t, req.Author)
	}
	if err := s.prepare(c, []*raftfsm.WriteItem{&p.item}); err != nil {
		return err
	}
	cmd := raftfsm.WriteCmd{Tenant: tenant, Items: []raftfsm.WriteItem{p.item}, Limit: s.limitFor(c, tenant)}
	res, err := s.proposeWrite(c, &cmd)
	if err != nil {
		return err
	}
	if res.Err != nil {
		return supersedeError(res.Err, cmd.Limit)
	}
	return s.ok(c, renderWriteResult(res.Results[0]))
}

// prepare embeds the items and fills IDs, timestamps and concepts.
func (s *Server) prepare(c *call, items []*raftfsm.WriteItem) error {
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = it.Content
	}
	vecs, err := s.emb.Embed(c.std, texts)
	if err != nil {
		return embedderUnavailable(err)
	}
	now := time.Now().UnixMicro()
	for i, it := range items {
		id, err := uuid.NewV7()
		if err != nil {
			return fmt.Errorf("cannot make atom ID: %w", err)
		}
		it.ID = raftfsm.ID(id)
		it.CreatedAt = now
		it.Vector = vecs[i]
		if len(it.Concepts) == 0 {
			it.Concepts = embedder.Concepts(it.Content, embedder.MaxConcepts)
		}
	}
	return nil
}

// embedderUnavailable is the retryable 503 of a failed embedding, with the
// embedder's reason (embedder.Error) or "embedder_unavailable".
func embedderUnavailable(err error) *apiError {
	reason := "embedder_unavailable"
	var e *embedder.Error
	switch {
	case errors.As(err, &e):
		reason = e.Reason
	case errors.Is(err, context.DeadlineExceeded):
		// The request's time ran out waiting for the embedder (a busy
		// in-process one): a timeout, not a failure.
		return unavailable("Embedding did not finish in the request's time; the server is busy, retry").
			with("reason", embedder.ReasonTimeout)
	}
	return unavailable("Embedding failed: "+err.Error()).with("reason", reason)
}

func (s *Server) proposeWrite(c *call, cmd *raftfsm.WriteCmd) (*raftfsm.WriteResults, error) {
	out, err := s.backend.Propose(c.std, cmd.Tenant, cmd.Encode())
	if err != nil {
		return nil, err
	}
	res, ok := out.(*raftfsm.WriteResults)
	if !ok {
		return nil, fmt.Errorf("unexpected write result %T", out)
	}
	return res, nil
}

// limitFor is the atom limit the apply enforces for a write to tenant:
// the caller's plan for its own account, none for rooms.
func (s *Server) limitFor(c *call, tenant string) int64 {
	if tenant != c.org {
		return 0
	}
	return c.settings.Plan.AtomLimit
}

// supersedeError maps an apply's refusal of a write; limit is the atom
// limit the write was given (raftfsm.WriteCmd.Limit).
func supersedeError(e *raftfsm.ApplyError, limit int64) *apiError {
	switch {
	case errors.Is(e, raftfsm.ErrLimit):
		return atomLimitError(limit)
	case errors.Is(e, raftfsm.ErrNotFound):
		return notFound(e.Message).with("atom_id", e.Target.String())
	case errors.Is(e, raftfsm.ErrSecretTarget): // no successor to name
		return conflict(e.Message).with("atom_id", e.Target.String())
	case errors.Is(e, raftfsm.ErrConflict):
		return conflict(e.Message).with("successor", e.Target.String())
	case errors.Is(e, raftfsm.ErrForbidden):
		return forbidden(e.Message)
	}
	return internalError()
}

func renderWriteResult(r raftfsm.WriteResult) writeResultJSON {
	var id *string
	if r.Stored || !r.AtomID.IsZero() {
		id = optID(r.AtomID)
	}
	return writeResultJSON{Stored: r.Stored, AtomID: id, Importance: r.Importance,
		Reason: r.Reason, Superseded: idStrings(r.Superseded)}
}

// provenance records who wrote a room atom: the caller's org, the agent and
// client environment from X-Hebb-Agent / X-Hebb-Client-Env, and whether the
// writer is someone other than the room owner.
func (s *Server) provenance(c *call, roomID string, _ json.RawMessage) *raftfsm.Provenance {
	room := c.rooms[roomID]
	return &raftfsm.Provenance{
		Principal:  c.org,
		Agent:      provenanceLabel(c.ctx.Request.Header.Peek("X-Hebb-Agent")),
		ClientEnv:  provenanceLabel(c.ctx.Request.Header.Peek("X-Hebb-Client-Env")),
		IsExternal: room.Room.Owner != c.org,
		RecordedAt: time.Now().UnixMicro(),
	}
}

// maxProvenanceLabel bounds the agent and client environment a room atom
// records from the request's headers (only the 16 KiB header buffer bounded
// them: a 5,000-character agent was kept on every atom).
const maxProvenanceLabel = 200

// provenanceLabel is a provenance header's value, trimmed and cut to
// maxProvenanceLabel characters (at a character's boundary; an invalid
// byte counts as one).
func provenanceLabel(v []byte) string {
	s := strings.TrimSpace(string(v))
	n := 0
	for i := range s {
		if n == maxProvenanceLabel {
			return strings.TrimSpace(s[:i])
		}
		n++
	}
	return s
}
