package router

import (
	"time"

	"github.com/hebbdb/hebb/raftfsm"
	"github.com/hebbdb/hebb/router/embedder"
)

// readRequest is POST /memory/read (interface §4.4).
type readRequest struct {
	Query               *string  `json:"query"`
	TopK                *int     `json:"top_k"`
	Domain              *string  `json:"domain"`
	MinRelevance        *float64 `json:"min_relevance"`
	IncludeAssociations *bool    `json:"include_associations"`
	IncludeHistory      *bool    `json:"include_history"`
	Diversity           *float64 `json:"diversity"`
	Concepts            []string `json:"concepts"`
	Fingerprint         *string  `json:"fingerprint"`
	IncludeTimings      *bool    `json:"include_timings"`
	AuthorPrincipal     *string  `json:"author_principal"`
	AuthorAgent         *string  `json:"author_agent"`
	AuthorClientEnv     *string  `json:"author_client_env"`
	AuthorIsExternal    *bool    `json:"author_is_external"`
}

type readResponseJSON struct {
	Items            []memoryItemJSON `json:"items"`
	EpisodicHit      bool             `json:"episodic_hit"`
	QueryConcepts    []string         `json:"query_concepts"`
	ExpandedConcepts []string         `json:"expanded_concepts"`
	SearchTimeMs     float64          `json:"search_time_ms"`
	DiversityMs      *float64         `json:"diversity_ms,omitempty"`
	NDBRoundtrips    *int             `json:"n_db_roundtrips,omitempty"`
	EmbedMs          *float64         `json:"embed_ms,omitempty"`
}

// searchPlan is a validated read, ready to run against a group.
type searchPlan struct {
	req           raftfsm.ReadRequest
	query         string
	queryConcepts []string
	timings       bool
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// validateRead checks a read request and builds its plan (no embedding yet).
func validateRead(v *validator, r *readRequest, loc []any) *searchPlan {
	at := func(f string) []any { return append(append([]any{}, loc...), f) }
	p := &searchPlan{}
	q := &p.req
	if r.Query == nil {
		v.add("missing", "Field required", at("query")...)
	} else {
		v.strLen(*r.Query, 1, maxQuery, at("query")...)
		p.query = *r.Query
	}
	q.TopK = defaultTopK
	if r.TopK != nil {
		v.intRange(*r.TopK, 1, maxTopK, at("top_k")...)
		q.TopK = *r.TopK
	}
	q.MinRelevance = defaultMinRel
	if r.MinRelevance != nil {
		v.floatRange(*r.MinRelevance, 0, 1, at("min_relevance")...)
		q.MinRelevance = *r.MinRelevance
	}
	if r.Diversity != nil {
		v.floatRange(*r.Diversity, 0, 1, at("diversity")...)
		q.Diversity = *r.Diversity
	}
	q.IncludeAssociations = boolOr(r.IncludeAssociations, true)
	q.IncludeHistory = boolOr(r.IncludeHistory, false)
	hints := v.concepts(r.Concepts, at("concepts")...)
	if r.Fingerprint != nil {
		v.strLen(*r.Fingerprint, 0, maxFingerprint, at("fingerprint")...)
		q.Fingerprint = *r.Fingerprint
	}
	p.timings = boolOr(r.IncludeTimings, false)
	q.Author = raftfsm.AuthorFilter{Principal: r.AuthorPrincipal, Agent: r.AuthorAgent,
		ClientEnv: r.AuthorClientEnv, IsExternal: r.AuthorIsExternal}
	extracted := embedder.Concepts(p.query, embedder.MaxConcepts)
	p.queryConcepts = unionStrings(extracted, hints)
	q.Concepts = unionStrings(p.queryConcepts, plainWords(p.query))
	return p
}

// plainWords are the query's unstemmed content words, so that client-given
// concepts ("themes") match as well as extracted stems ("theme").
func plainWords(q string) []string {
	var out []string
	for _, w := range embedder.Tokens(q) {
		if !embedder.IsStopWord(w) {
			out = append(out, w)
		}
	}
	return out
}

func (s *Server) read(c *call) error {
	start := time.Now()
	var req readRequest
	if err := decodeBody(c.ctx.PostBody(), &req, false); err != nil {
		return err
	}
	v := &validator{}
	p := validateRead(v, &req, nil)
	if req.Domain != nil {
		v.strLen(*req.Domain, 0, maxDomain, "domain")
	}
	if err := v.err(); err != nil {
		return err
	}
	p.req.Tenant = c.org
	p.req.HideReplaced = c.settings.HideReplaced
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
			p.req.Tenant = tenant
			p.req.IncludeHistory = false
		} else {
			p.req.Domains = []string{orDefault(*req.Domain)}
		}
	}
	resp, err := s.search(c, p)
	if err != nil {
		return err
	}
	resp.SearchTimeMs = msSince(start)
	return s.ok(c, resp)
}

// search embeds the query, runs the plan in the tenant's group and renders
// the read response.
func (s *Server) search(c *call, p *searchPlan) (*readResponseJSON, error) {
	embedStart := time.Now()
	vecs, err := s.emb.Embed(c.std, []string{p.query})
	if err != nil {
		return nil, embedderUnavailable(err)
	}
	embedMs := msSince(embedStart)
	embedDuration.Observe(embedMs / 1000)
	p.req.Vector = vecs[0]
	p.req.Calibration = embedder.ScoreExponent(s.emb)
	fsm, err := s.backend.ReadFSM(c.std, p.req.Tenant)
	if err != nil {
		return nil, err
	}
	searchStart := time.Now()
	res := fsm.Read(&p.req)
	searchDuration.Observe(time.Since(searchStart).Seconds())
	s.touch.add(p.req.Tenant, res.Touch)
	out := &readResponseJSON{
		Items:            make([]memoryItemJSON, len(res.Items)),
		EpisodicHit:      res.EpisodicHit,
		QueryConcepts:    nonNil(p.queryConcepts),
		ExpandedConcepts: unionStrings(p.queryConcepts, res.Expanded),
	}
	out.ExpandedConcepts = nonNil(out.ExpandedConcepts)
	for i := range res.Items {
		out.Items[i] = renderItem(&res.Items[i])
	}
	if p.timings {
		rt := res.Roundtrips
		out.NDBRoundtrips = &rt
		out.EmbedMs = &embedMs
		if res.Diversified {
			d := res.DiversityMs
			out.DiversityMs = &d
		}
	}
	return out, nil
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }
