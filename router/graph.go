package router

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/hebbdb/hebb/raftfsm"
	"github.com/hebbdb/hebb/router/embedder"
)

const (
	maxSeeds        = 20
	maxSeedLen      = 200
	maxDepth        = 3
	maxGraphLimit   = 500
	defGraphLimit   = 100
	deepWeightFloor = 0.05
)

type graphRequest struct {
	Seeds     []string `json:"seeds"`
	Depth     *int     `json:"depth"`
	Domain    *string  `json:"domain"`
	MinWeight *float64 `json:"min_weight"`
	Limit     *int     `json:"limit"`
}

type graphNodeJSON struct {
	Concept string `json:"concept"`
	Degree  int    `json:"degree"`
}

type graphEdgeJSON struct {
	Source    string  `json:"source"`
	Target    string  `json:"target"`
	Weight    float64 `json:"weight"`
	Valence   float64 `json:"valence"`
	Count     int64   `json:"count"`
	UpdatedAt string  `json:"updated_at"`
}

type graphJSON struct {
	Nodes            []graphNodeJSON `json:"nodes"`
	Edges            []graphEdgeJSON `json:"edges"`
	Truncated        bool            `json:"truncated"`
	MinWeightApplied float64         `json:"min_weight_applied"`
}

func validateGraph(v *validator, r *graphRequest) raftfsm.GraphRequest {
	q := raftfsm.GraphRequest{Depth: 1, Limit: defGraphLimit}
	switch {
	case r.Seeds == nil:
		v.add("missing", "Field required", "seeds")
	case len(r.Seeds) == 0 || len(r.Seeds) > maxSeeds:
		v.add("value_error", fmt.Sprintf("seeds must hold 1 to %d concepts", maxSeeds), "seeds")
	}
	for i, s := range r.Seeds {
		if strings.TrimSpace(s) == "" {
			v.add("value_error", "seed must not be blank", "seeds", i)
		} else if utf8.RuneCountInString(s) > maxSeedLen {
			v.add("string_too_long", fmt.Sprintf("seed must be at most %d characters", maxSeedLen), "seeds", i)
		}
		q.Seeds = append(q.Seeds, embedder.NormalizeConcept(s))
	}
	if r.Depth != nil {
		v.intRange(*r.Depth, 1, maxDepth, "depth")
		q.Depth = *r.Depth
	}
	if r.Limit != nil {
		v.intRange(*r.Limit, 1, maxGraphLimit, "limit")
		q.Limit = *r.Limit
	}
	switch {
	case r.MinWeight != nil:
		v.floatRange(*r.MinWeight, 0, math.MaxFloat64, "min_weight")
		q.MinWeight = *r.MinWeight
	case q.Depth >= 2:
		q.MinWeight = deepWeightFloor
	}
	return q
}

// graph is POST /memory/graph: a bounded read of the association graph.
func (s *Server) graph(c *call) error {
	var req graphRequest
	if err := decodeBody(c.ctx.PostBody(), &req, false); err != nil {
		return err
	}
	v := &validator{}
	q := validateGraph(v, &req)
	if err := v.err(); err != nil {
		return err
	}
	q.Tenant = c.org
	if req.Domain != nil {
		kind, id, derr := classifyDomain(*req.Domain)
		if derr != nil {
			return derr
		}
		if kind == domainRoom {
			tenant, err := s.roomTenant(c, id, false)
			if err != nil {
				return err
			}
			q.Tenant = tenant
		}
	}
	fsm, err := s.backend.ReadFSM(c.std, q.Tenant)
	if err != nil {
		return err
	}
	res := fsm.Graph(&q)
	return s.ok(c, renderGraph(res, q.MinWeight))
}

func renderGraph(res raftfsm.GraphResult, floor float64) graphJSON {
	out := graphJSON{Nodes: []graphNodeJSON{}, Edges: make([]graphEdgeJSON, len(res.Edges)),
		Truncated: res.Truncated, MinWeightApplied: floor}
	degree := map[string]int{}
	var order []string
	for i, e := range res.Edges {
		out.Edges[i] = graphEdgeJSON{Source: e.A, Target: e.B, Weight: e.Weight, Valence: e.Valence,
			Count: e.Count, UpdatedAt: formatMicros(e.UpdatedAt)}
		for _, c := range [2]string{e.A, e.B} {
			if degree[c] == 0 {
				order = append(order, c)
			}
			degree[c]++
		}
	}
	for _, c := range order {
		out.Nodes = append(out.Nodes, graphNodeJSON{Concept: c, Degree: degree[c]})
	}
	return out
}
