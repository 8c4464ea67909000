package router

type consolidateRequest struct {
	Domain *string `json:"domain"`
}

// consolidate is POST /memory/consolidate: 503 consolidation_disabled unless
// the operator enabled it.
func (s *Server) consolidate(c *call) error {
	var req consolidateRequest
	if body := c.ctx.PostBody(); len(body) > 0 {
		if err := decodeBody(body, &req, true); err != nil {
			return err
		}
	}
	if req.Domain != nil {
		kind, id, derr := classifyDomain(*req.Domain)
		if derr != nil {
			return derr
		}
		if kind == domainRoom {
			if _, err := s.roomTenant(c, id, true); err != nil {
				return err
			}
		}
	}
	if !s.cfg.EnableConsolidation {
		return newError(503, codeInternal, "Consolidation is disabled on this deployment").
			with("reason", "consolidation_disabled")
	}
	return newError(503, codeInternal, "Consolidation is not available in this build yet").
		with("reason", "consolidation_unavailable")
}
