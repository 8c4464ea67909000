package router

import (
	"fmt"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
)

const maxFeedbackAtoms = 500

type feedbackRequest struct {
	AtomIDs       []string `json:"atom_ids"`
	Outcome       *float64 `json:"outcome"`
	Concepts      []string `json:"concepts"`
	QueryConcepts []string `json:"query_concepts"`
	Domain        *string  `json:"domain"`
}

type feedbackJSON struct {
	UpdatedCount      int     `json:"updated_count"`
	AvgValence        float64 `json:"avg_valence"`
	CoactivationEdges int     `json:"coactivation_edges"`
	FeedbackTimeMs    float64 `json:"feedback_time_ms"`
}

// feedback is POST /memory/feedback: valence learning and co-activation.
func (s *Server) feedback(c *call) error {
	start := time.Now()
	var req feedbackRequest
	if err := decodeBody(c.ctx.PostBody(), &req, true); err != nil {
		return err
	}
	v := &validator{}
	cmd := raftfsm.FeedbackCmd{Tenant: c.org, At: time.Now().UnixMicro()}
	switch {
	case req.AtomIDs == nil:
		v.add("missing", "Field required", "atom_ids")
	case len(req.AtomIDs) == 0:
		v.add("too_short", "List should have at least 1 item after validation, not 0", "atom_ids")
	default:
		cmd.IDs = v.uuidSet(req.AtomIDs, maxFeedbackAtoms, "atom_ids")
	}
	if req.Outcome == nil {
		v.add("missing", "Field required", "outcome")
	} else {
		v.floatRange(*req.Outcome, -1, 1, "outcome")
		cmd.Outcome = *req.Outcome
	}
	cmd.Concepts = v.concepts(req.Concepts, "concepts")
	cmd.QueryConcepts = v.concepts(req.QueryConcepts, "query_concepts")
	if req.Domain != nil {
		v.strLen(*req.Domain, 0, maxDomain, "domain")
	}
	if err := v.err(); err != nil {
		return err
	}
	if req.Domain != nil {
		kind, id, derr := classifyDomain(*req.Domain)
		if derr != nil {
			return derr
		}
		if kind == domainRoom {
			tenant, err := s.roomTenant(c, id, true)
			if err != nil {
				return err
			}
			cmd.Tenant = tenant
		}
	}
	out, err := s.backend.Propose(c.std, cmd.Tenant, cmd.Encode())
	if err != nil {
		return err
	}
	res, ok := out.(*raftfsm.FeedbackResult)
	if !ok {
		return fmt.Errorf("unexpected feedback result %T", out)
	}
	return s.ok(c, feedbackJSON{UpdatedCount: res.Updated, AvgValence: res.AvgValence,
		CoactivationEdges: res.CoactivationEdges, FeedbackTimeMs: msSince(start)})
}
