package router

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/bytedance/sonic"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router/pack"
)

// The bodies of POST /orchestration/context: render_context_reply.v0 and
// its error form (the same type and version, an error object, HTTP status
// of the error).

// renderError is an error of this endpoint, written as its own body.
type renderError struct {
	status    int
	code      string
	message   string
	field     string
	retryable bool
}

func (e *renderError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.message) }

func badRender(code, field, msg string) *renderError {
	return &renderError{status: 400, code: code, message: msg, field: field}
}

type renderErrorJSON struct {
	Code      string  `json:"code"`
	Message   string  `json:"message"`
	Field     *string `json:"field"`
	Retryable bool    `json:"retryable"`
}

type renderErrorReply struct {
	Type      string          `json:"type"`
	Version   string          `json:"version"`
	ID        *string         `json:"id"`
	RequestID *string         `json:"request_id"`
	Error     renderErrorJSON `json:"error"`
}

func writeRenderBody(c *call, status int, body []byte) {
	c.ctx.SetStatusCode(status)
	c.ctx.SetContentType("application/json")
	c.ctx.SetBody(body)
}

func (s *Server) writeRenderError(c *call, req *renderRequest, err error) {
	re := s.asRenderError(c, err)
	out := renderErrorReply{Type: renderReplyType, Version: renderVersion, ID: req.ID, RequestID: req.RequestID,
		Error: renderErrorJSON{Code: re.code, Message: re.message, Field: optString(re.field), Retryable: re.retryable}}
	body, merr := sonic.Marshal(out)
	if merr != nil {
		s.log.Error("cannot encode render error", "err", merr, "request_id", c.reqID)
		body = []byte(`{"type":"render_context_reply.v0","version":"v0","id":null,"request_id":null,` +
			`"error":{"code":"INTERNAL","message":"Internal server error","field":null,"retryable":false}}`)
		re.status = 500
	}
	writeRenderBody(c, re.status, body)
}

// asRenderError maps any error to this endpoint's error, in one place.
func (s *Server) asRenderError(c *call, err error) *renderError {
	var re *renderError
	var ae *apiError
	switch {
	case errors.As(err, &re):
		return re
	case errors.As(err, &ae):
		code := map[int]string{400: renderInvalidField, 403: renderForbidden, 404: renderNotFound,
			503: renderUnavailable}[ae.Status]
		if code == "" {
			code = renderInternal
		}
		return &renderError{status: ae.Status, code: code, message: ae.Message, retryable: ae.Retryable}
	case errors.Is(err, ErrUnavailable), errors.Is(err, cluster.ErrUnavailable),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &renderError{status: 503, code: renderUnavailable, retryable: true,
			message: "Service unavailable: no leader answered in time"}
	default:
		s.log.Error("render failed", "err", err, "request_id", c.reqID)
		return &renderError{status: 500, code: renderInternal, message: "Internal server error"}
	}
}

// renderReply is render_context_reply.v0.
type renderReply struct {
	Type      string               `json:"type"`
	Version   string               `json:"version"`
	ID        string               `json:"id"`
	RequestID string               `json:"request_id"`
	Context   string               `json:"context"`
	Sections  []renderSectionJSON  `json:"sections"`
	Usage     renderUsageJSON      `json:"usage"`
	Omissions []renderOmissionJSON `json:"omissions"`
	Policy    renderPolicyJSON     `json:"policy"`
	Error     *renderErrorJSON     `json:"error"`
}

type renderSectionJSON struct {
	Name   string           `json:"name"`
	Title  string           `json:"title"`
	Tokens int              `json:"tokens"`
	Items  []renderItemJSON `json:"items"`
}

type renderItemJSON struct {
	AtomID    string  `json:"atom_id"`
	Relevance float64 `json:"relevance"`
	Tokens    int     `json:"tokens"`
	Domain    string  `json:"domain"`
	Source    string  `json:"source"`
	Pinned    bool    `json:"pinned"`
	Redacted  bool    `json:"redacted"`
}

type renderUsageJSON struct {
	Encoding      string  `json:"encoding"`
	TokensUsed    int     `json:"tokens_used"`
	TokensMax     int     `json:"tokens_max"`
	ElapsedMs     float64 `json:"elapsed_ms"`
	TimeMs        int     `json:"time_ms"`
	TimeTargetMet bool    `json:"time_target_met"`
	Candidates    int     `json:"candidates"`
	Included      int     `json:"included"`
}

type renderOmissionJSON struct {
	AtomID    string  `json:"atom_id"`
	Section   string  `json:"section"`
	Relevance float64 `json:"relevance"`
	Tokens    int     `json:"tokens"`
	Reason    string  `json:"reason"`
}

type renderPolicyJSON struct {
	RiskLevel      string   `json:"risk_level"`
	RelevanceFloor float64  `json:"relevance_floor"`
	PinWarnings    bool     `json:"pin_warnings"`
	PrivacyMode    string   `json:"privacy_mode"`
	Redactions     int      `json:"redactions"`
	Domains        []string `json:"domains"`
}

func (p *renderPlan) reply(res pack.Result, found []memoryItemJSON, omitted []pack.Omission, redactions int) *renderReply {
	byID := make(map[string]*memoryItemJSON, len(found))
	for i := range found {
		byID[found[i].AtomID] = &found[i]
	}
	r := &renderReply{Type: renderReplyType, Version: renderVersion, ID: p.ID, RequestID: p.RequestID,
		Context: res.Text, Sections: []renderSectionJSON{}, Omissions: []renderOmissionJSON{},
		Usage: renderUsageJSON{Encoding: p.Encoding, TokensUsed: res.Tokens, TokensMax: p.TokensMax,
			TimeMs: p.TimeMs, Candidates: len(found)},
		Policy: renderPolicyJSON{RiskLevel: p.Risk, RelevanceFloor: p.policy.floor, PinWarnings: p.policy.pin,
			PrivacyMode: p.Privacy, Redactions: redactions, Domains: nonNil(p.Domains)}}
	for _, sec := range res.Sections {
		out := renderSectionJSON{Name: string(sec.Section), Title: sec.Section.Title(), Tokens: sec.Tokens}
		for _, it := range sec.Items {
			m := byID[it.ID]
			out.Items = append(out.Items, renderItemJSON{AtomID: it.ID, Relevance: it.Relevance, Tokens: it.Tokens,
				Domain: m.Domain, Source: m.Source, Pinned: it.Pinned, Redacted: it.Text != m.Content})
		}
		r.Usage.Included += len(out.Items)
		r.Sections = append(r.Sections, out)
	}
	all := append(append([]pack.Omission(nil), omitted...), res.Omitted...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Relevance > all[j].Relevance })
	for _, o := range all {
		r.Omissions = append(r.Omissions, renderOmissionJSON{AtomID: o.ID, Section: string(o.Section),
			Relevance: o.Relevance, Tokens: o.Tokens, Reason: o.Reason})
	}
	return r
}
