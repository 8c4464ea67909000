package router

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
)

const maxBatchQueries = 50

type readBatchRequest struct {
	Queries []readRequest `json:"queries"`
}

type readBatchJSON struct {
	Results []*readResponseJSON `json:"results"`
}

// readBatch is POST /memory/read-batch: up to 50 reads of the caller's own
// account, each with its own options; room addresses are refused.
func (s *Server) readBatch(c *call) error {
	var req readBatchRequest
	if err := decodeBody(c.ctx.PostBody(), &req, false); err != nil {
		return err
	}
	v := &validator{}
	switch {
	case req.Queries == nil:
		v.add("missing", "Field required", "queries")
	case len(req.Queries) == 0:
		v.add("too_short", "List should have at least 1 item after validation, not 0", "queries")
	case len(req.Queries) > maxBatchQueries:
		v.add("too_long", fmt.Sprintf("List should have at most %d items after validation, not %d", maxBatchQueries, len(req.Queries)), "queries")
	}
	plans := make([]*searchPlan, len(req.Queries))
	for i := range req.Queries {
		loc := []any{"queries", i}
		plans[i] = validateRead(v, &req.Queries[i], loc)
		if d := req.Queries[i].Domain; d != nil {
			v.strLen(*d, 0, maxDomain, append(loc, "domain")...)
			if err := privateDomain(*d, roomOnV2Msg, append(loc, "domain")...); err != nil {
				v.errs = append(v.errs, err.Details["errors"].([]fieldError)...)
			}
			plans[i].req.Domains = []string{orDefault(*d)} // as read does
		}
	}
	if err := v.err(); err != nil {
		return err
	}
	out := readBatchJSON{Results: make([]*readResponseJSON, len(plans))}
	for i, p := range plans {
		start := time.Now()
		p.req.Tenant = c.org
		p.req.HideReplaced = c.settings.HideReplaced
		res, err := s.search(c, p)
		if err != nil {
			return err
		}
		res.SearchTimeMs = msSince(start)
		out.Results[i] = res
	}
	if resultsSize(out.Results) > streamResultsAbove {
		streamResults(c, s.log, out.Results)
		return nil
	}
	return s.ok(c, out)
}

type conditionJSON struct {
	Field *string         `json:"field"`
	Op    *string         `json:"op"`
	Value json.RawMessage `json:"value"`
}

type queryRequest struct {
	Query               *string         `json:"query"`
	Domains             []string        `json:"domains"`
	MetadataFilter      []conditionJSON `json:"metadata_filter"`
	TopK                *int            `json:"top_k"`
	MinRelevance        *float64        `json:"min_relevance"`
	IncludeAssociations *bool           `json:"include_associations"`
	IncludeHistory      *bool           `json:"include_history"`
	Diversity           *float64        `json:"diversity"`
	Concepts            []string        `json:"concepts"`
}

// query is POST /memory/query: a read over several domains with metadata
// conditions evaluated inside the group.
func (s *Server) query(c *call) error {
	start := time.Now()
	var req queryRequest
	if err := decodeBody(c.ctx.PostBody(), &req, false); err != nil {
		return err
	}
	v := &validator{}
	p := validateRead(v, &readRequest{Query: req.Query, TopK: req.TopK, MinRelevance: req.MinRelevance,
		IncludeAssociations: req.IncludeAssociations, IncludeHistory: req.IncludeHistory,
		Diversity: req.Diversity, Concepts: req.Concepts}, nil)
	if len(req.Domains) > 0 { // [] filters nothing, as an empty metadata_filter
		p.req.Domains = make([]string, 0, len(req.Domains))
		for i, d := range req.Domains {
			v.strLen(d, 0, maxDomain, "domains", i)
			if err := privateDomain(d, roomOnV2Msg, "domains", i); err != nil {
				v.errs = append(v.errs, err.Details["errors"].([]fieldError)...)
			}
			p.req.Domains = append(p.req.Domains, orDefault(d))
		}
	}
	p.req.Filter = validateFilter(v, req.MetadataFilter)
	if err := v.err(); err != nil {
		return err
	}
	p.req.Tenant = c.org
	p.req.HideReplaced = c.settings.HideReplaced
	resp, err := s.search(c, p)
	if err != nil {
		return err
	}
	resp.SearchTimeMs = msSince(start)
	return s.ok(c, resp)
}

func validateFilter(v *validator, conds []conditionJSON) []raftfsm.Condition {
	out := make([]raftfsm.Condition, 0, len(conds))
	for i, c := range conds {
		loc := []any{"metadata_filter", i}
		if c.Field == nil || *c.Field == "" {
			v.add("missing", "Field required", append(loc, "field")...)
			continue
		}
		if c.Op == nil {
			v.add("missing", "Field required", append(loc, "op")...)
			continue
		}
		raw := bytes.TrimSpace(c.Value)
		if len(raw) == 0 {
			v.add("missing", "Field required", append(loc, "value")...)
			continue
		}
		switch *c.Op {
		case "eq", "contains":
		case "in":
			if raw[0] != '[' {
				v.add("list_type", "value of an 'in' condition must be an array", append(loc, "value")...)
				continue
			}
		default:
			v.add("literal_error", "Input should be 'eq', 'contains' or 'in'", append(loc, "op")...)
			continue
		}
		out = append(out, raftfsm.Condition{Field: *c.Field, Op: *c.Op, Value: append([]byte(nil), raw...)})
	}
	return out
}
