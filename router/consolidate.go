package router

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/hebbdb/hebb/raftfsm"
)

type consolidateJSON struct {
	Domain              string  `json:"domain"`
	AtomsBefore         int     `json:"atoms_before"`
	AtomsAfter          int     `json:"atoms_after"`
	PrototypesCreated   int     `json:"prototypes_created"`
	SingletonsProtected int     `json:"singletons_protected"`
	CompressionRatio    float64 `json:"compression_ratio"`
	DurationMs          float64 `json:"duration_ms"`
}

type consolidateRequest struct {
	Domain *string `json:"domain"`
}

// consolidateTimeout bounds a consolidation's command: its apply compares
// each of the domain's live episodes with the others through the domain's
// search.
const consolidateTimeout = 2 * time.Minute

// consolidate is POST /memory/consolidate: 503 consolidation_disabled unless
// the operator enabled it.
func (s *Server) consolidate(c *call) error {
	start := time.Now()
	var req consolidateRequest
	if body := c.ctx.PostBody(); len(body) > 0 {
		if err := decodeBody(body, &req, true); err != nil {
			return err
		}
	}
	tenant := c.org
	if req.Domain != nil {
		v := &validator{}
		if v.strLen(*req.Domain, 0, maxDomain, "domain"); v.err() != nil {
			return v.err()
		}
		kind, id, derr := classifyDomain(*req.Domain)
		if derr != nil {
			return derr
		}
		if kind == domainRoom {
			t, err := s.roomTenant(c, id, true)
			if err != nil {
				return err
			}
			tenant = t
		}
	}
	if !s.cfg.EnableConsolidation {
		return newError(503, codeInternal, "Consolidation is disabled on this deployment").
			with("reason", "consolidation_disabled")
	}
	domain := defaultDomain
	if req.Domain != nil && *req.Domain != "" {
		domain = *req.Domain
	}
	base, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("cannot make prototype IDs: %w", err)
	}
	// A room's atoms live in the room's tenant under the room address.
	cmd := raftfsm.ConsolidateCmd{Tenant: tenant, Domain: domain, At: time.Now().UnixMicro(), BaseID: raftfsm.ID(base)}
	// A domain of 100k atoms takes ~9 s to consolidate on 2 cores: longer
	// than a request's usual deadline, which would answer 503 for a
	// consolidation that then happens.
	ctx, cancel := context.WithTimeout(parentContext(c.ctx), consolidateTimeout)
	defer cancel()
	out, err := s.backend.Propose(ctx, tenant, cmd.Encode())
	if err != nil {
		return err
	}
	res, ok := out.(*raftfsm.ConsolidateResult)
	if !ok {
		return fmt.Errorf("unexpected consolidate result %T", out)
	}
	ratio := 1.0
	if res.AtomsBefore > 0 {
		ratio = float64(res.AtomsAfter) / float64(res.AtomsBefore)
	}
	return s.ok(c, consolidateJSON{Domain: domain, AtomsBefore: res.AtomsBefore, AtomsAfter: res.AtomsAfter,
		PrototypesCreated: res.PrototypesCreated, SingletonsProtected: res.SingletonsProtected,
		CompressionRatio: ratio, DurationMs: msSince(start)})
}
