package router

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bytedance/sonic"
	"github.com/google/uuid"

	"github.com/hebbdb/hebb/raftfsm"
	"github.com/hebbdb/hebb/router/pack"
)

// POST /api/v1/orchestration/context (interface §4.9): an agent states an
// intent and a budget and gets back the context to put in its prompt. The
// request is render_request.v0, the reply render_context_reply.v0; errors
// of this endpoint are render_context_reply.v0 bodies with an error object
// (the §7.1 envelope answers only the 401 and 429 of the REST layer, which
// run before the handler). See the README section "Orchestration context".

const (
	renderVersion    = "v0"
	renderReplyType  = "render_context_reply.v0"
	maxRenderTokens  = 1_000_000
	maxRenderTimeMs  = 600_000
	defaultTimeMs    = 1000
	maxRequestIDLen  = 255
	maxRenderDomains = 20
	renderDiversity  = 0.3
	minCandidates    = 10
	maxCandidates    = 150
	tokensPerCand    = 12 // one candidate searched per this many tokens of budget
	defaultRiskLevel = "medium"
	floorSlack       = 1e-9 // relevance is a float product: 0.45 may come out as 0.4499…
)

// Error codes of render_context_reply.v0.
const (
	renderInvalidJSON     = "INVALID_JSON"
	renderBadVersion      = "UNSUPPORTED_VERSION"
	renderMissingField    = "MISSING_FIELD"
	renderInvalidField    = "INVALID_FIELD"
	renderUnknownPrivacy  = "UNKNOWN_PRIVACY_MODE"
	renderUnknownRisk     = "UNKNOWN_RISK_LEVEL"
	renderUnknownEncoding = "UNKNOWN_ENCODING"
	renderIDConflict      = "REQUEST_ID_CONFLICT"
	renderNoStreaming     = "STREAMING_UNSUPPORTED"
	renderForbidden       = "FORBIDDEN"
	renderNotFound        = "NOT_FOUND"
	renderUnavailable     = "UNAVAILABLE"
	renderInternal        = "INTERNAL"
)

// riskPolicy is what a risk_profile.level changes: the relevance floor of
// what is included and whether relevant warnings are pinned (packed before
// anything else, down to pinFloor).
type riskPolicy struct {
	floor    float64
	pin      bool
	pinFloor float64
}

var riskLevels = map[string]riskPolicy{
	"low":    {floor: 0.2},
	"medium": {floor: 0.3},
	"high":   {floor: 0.45, pin: true, pinFloor: 0.2},
}

// renderRequest is render_request.v0; Domains and Encoding are extensions.
type renderRequest struct {
	Version *string `json:"version"`
	ID      *string `json:"id"`
	Intent  *string `json:"intent"`
	Budgets *struct {
		TokensMax *int `json:"tokens_max"`
		TimeMs    *int `json:"time_ms"`
	} `json:"budgets"`
	RiskProfile *struct {
		Level *string `json:"level"`
	} `json:"risk_profile"`
	PrivacyMode *string  `json:"privacy_mode"`
	RequestID   *string  `json:"request_id"`
	Domains     []string `json:"domains"`
	Encoding    *string  `json:"encoding"`
}

// renderPlan is a validated request.
type renderPlan struct {
	ID        string   `json:"id"`
	RequestID string   `json:"request_id"`
	Intent    string   `json:"intent"`
	TokensMax int      `json:"tokens_max"`
	TimeMs    int      `json:"time_ms"`
	Risk      string   `json:"risk"`
	Privacy   string   `json:"privacy"`
	Encoding  string   `json:"encoding"`
	Domains   []string `json:"domains"`

	policy riskPolicy
	tok    *pack.Tokenizer
}

// orchestrate is the handler.
func (s *Server) orchestrate(c *call) error {
	start := time.Now()
	var req renderRequest
	plan, err := s.parseRender(c, &req)
	if err == nil {
		err = s.renderOnce(c, plan, start)
	}
	if err == nil {
		return nil
	}
	if _, ok := notHosted(err); ok {
		return err // answered by a node that hosts the tenant
	}
	s.writeRenderError(c, &req, err)
	return nil
}

// renderOnce answers plan through the reply cache: a repeat of a request_id
// gets the stored reply, a concurrent repeat waits for the first.
func (s *Server) renderOnce(c *call, plan *renderPlan, start time.Time) error {
	key := replyKey{org: c.org, requestID: plan.RequestID}
	cache := s.renderReplies()
	for {
		e, owner, err := cache.begin(key, plan.hash(), time.Now())
		if err != nil {
			return err
		}
		if owner {
			return s.renderOwned(c, plan, start, cache, e)
		}
		select {
		case <-e.done:
		case <-c.std.Done():
			return c.std.Err()
		}
		if body := e.reply(); body != nil {
			current, err := s.replayable(c, plan, e.shown)
			if err != nil {
				return err
			}
			if !current {
				cache.forget(e)
				continue
			}
			c.ctx.Response.Header.Set("Idempotent-Replayed", "true")
			writeRenderBody(c, 200, body)
			return nil
		}
	}
}

// shownAtom is a memory a stored reply shows, and the account holding it.
type shownAtom struct {
	tenant string
	id     raftfsm.ID
}

// replayable reports whether a stored reply may be sent again: the caller
// must still pass the membership check of every room the request names
// (its error is the answer), and every memory the reply shows must still
// exist (a deleted one is rendered out: false, and the request is rendered
// anew, as is one whose memories this node cannot check).
func (s *Server) replayable(c *call, plan *renderPlan, shown []shownAtom) (bool, error) {
	if _, err := s.renderScopes(c, plan); err != nil {
		return false, err
	}
	fsms := map[string]*raftfsm.FSM{} // one read barrier per account
	for _, a := range shown {
		fsm := fsms[a.tenant]
		if fsm == nil {
			var err error
			if fsm, err = s.backend.ReadFSM(c.std, a.tenant); err != nil {
				return false, nil
			}
			fsms[a.tenant] = fsm
		}
		if _, ok := fsm.Get(a.tenant, a.id); !ok {
			return false, nil
		}
	}
	return true, nil
}

// renderOwned renders the reply of the entry this call owns and stores it;
// a failure (or a panic) forgets the entry so that a repeat renders again.
func (s *Server) renderOwned(c *call, plan *renderPlan, start time.Time, cache *replyCache, e *replyEntry) error {
	var body []byte
	defer func() { cache.finish(e, body, time.Now()) }()
	body, shown, err := s.render(c, plan, start)
	e.shown = shown
	if err != nil {
		body = nil
		return err
	}
	writeRenderBody(c, 200, body)
	return nil
}

// parseRender decodes and validates the body into a plan. The version is
// checked first: the meaning of every other field depends on it.
func (s *Server) parseRender(c *call, req *renderRequest) (*renderPlan, error) {
	if acceptsOnlyStream(string(c.ctx.Request.Header.Peek("Accept"))) {
		return nil, &renderError{status: 406, code: renderNoStreaming,
			message: "Streaming is not supported in v0: the reply is one JSON object (Accept: application/json)"}
	}
	return decodeRender(c.ctx.PostBody(), req)
}

// decodeRender decodes and validates a render_request.v0 body.
func decodeRender(body []byte, req *renderRequest) (*renderPlan, error) {
	var probe map[string]json.RawMessage
	// Bytes that are not UTF-8 are not JSON (RFC 8259); decoded, they became
	// U+FFFD, and request_ids that differ only in them one key.
	if err := lenientJSON.Unmarshal(body, &probe); err != nil || probe == nil || !utf8.Valid(body) {
		return nil, badRender(renderInvalidJSON, "", "The body must be one JSON object (render_request.v0)")
	}
	echoIDs(probe, req)
	raw, ok := probe["version"]
	if !ok || string(raw) == "null" {
		return nil, badRender(renderMissingField, "version", "Field required: version (\"v0\")")
	}
	var version string
	if json.Unmarshal(raw, &version) != nil || version != renderVersion {
		return nil, badRender(renderBadVersion, "version", "Unsupported version "+string(raw)+"; this endpoint serves \"v0\"")
	}
	if err := lenientJSON.Unmarshal(body, req); err != nil {
		return nil, fieldTypeError(body, probe, req)
	}
	return validateRender(req)
}

// echoIDs sets req's id and request_id from the body's fields when they
// are strings, for an error reply to echo; others stay nil (JSON null).
func echoIDs(probe map[string]json.RawMessage, req *renderRequest) {
	for name, dst := range map[string]**string{"id": &req.ID, "request_id": &req.RequestID} {
		var v string
		if json.Unmarshal(probe[name], &v) == nil {
			*dst = &v
		}
	}
}

// fieldTypeError names the first field whose JSON type is wrong.
func fieldTypeError(body []byte, probe map[string]json.RawMessage, req *renderRequest) *renderError {
	errs := diagnose(body, reflect.TypeOf(req).Elem(), false)
	*req = renderRequest{} // the decoder may have filled part of it
	echoIDs(probe, req)
	for _, fe := range errs {
		var parts []string
		for _, l := range fe.Loc[1:] {
			parts = append(parts, fmt.Sprint(l))
		}
		if len(parts) > 0 {
			return badRender(renderInvalidField, strings.Join(parts, "."), fe.Msg)
		}
	}
	return badRender(renderInvalidJSON, "", "The body must be one JSON object (render_request.v0)")
}

func acceptsOnlyStream(accept string) bool {
	return strings.Contains(accept, "text/event-stream") && !strings.Contains(accept, "json") &&
		!strings.Contains(accept, "*/*")
}

func validateRender(req *renderRequest) (*renderPlan, error) {
	p := &renderPlan{TimeMs: defaultTimeMs, Risk: defaultRiskLevel, Privacy: string(pack.PrivacyAllow),
		Encoding: pack.DefaultEncoding}
	if req.ID == nil {
		return nil, badRender(renderMissingField, "id", "Field required: id (a UUID)")
	}
	if _, err := uuid.Parse(*req.ID); err != nil || len(*req.ID) != 36 {
		return nil, badRender(renderInvalidField, "id", "id must be a UUID string")
	}
	p.ID = *req.ID
	if req.Intent == nil {
		return nil, badRender(renderMissingField, "intent", "Field required: intent")
	}
	if n := utf8.RuneCountInString(*req.Intent); strings.TrimSpace(*req.Intent) == "" || n > maxQuery {
		return nil, badRender(renderInvalidField, "intent", fmt.Sprintf("intent must be 1 to %d characters, not blank", maxQuery))
	}
	p.Intent = *req.Intent
	if err := p.budgets(req); err != nil {
		return nil, err
	}
	if err := p.options(req); err != nil {
		return nil, err
	}
	if req.RequestID == nil {
		return nil, badRender(renderMissingField, "request_id", "Field required: request_id")
	}
	if n := utf8.RuneCountInString(*req.RequestID); strings.TrimSpace(*req.RequestID) == "" || n > maxRequestIDLen {
		return nil, badRender(renderInvalidField, "request_id", fmt.Sprintf("request_id must be 1 to %d characters, not blank", maxRequestIDLen))
	}
	p.RequestID = *req.RequestID
	return p, p.domains(req)
}

func (p *renderPlan) budgets(req *renderRequest) error {
	b := req.Budgets
	if b == nil {
		return badRender(renderMissingField, "budgets", "Field required: budgets (tokens_max, time_ms)")
	}
	if b.TokensMax == nil {
		return badRender(renderMissingField, "budgets.tokens_max", "Field required: budgets.tokens_max")
	}
	if *b.TokensMax < 1 || *b.TokensMax > maxRenderTokens {
		return badRender(renderInvalidField, "budgets.tokens_max", fmt.Sprintf("tokens_max must be 1 to %d", maxRenderTokens))
	}
	p.TokensMax = *b.TokensMax
	if b.TimeMs != nil {
		if *b.TimeMs < 1 || *b.TimeMs > maxRenderTimeMs {
			return badRender(renderInvalidField, "budgets.time_ms", fmt.Sprintf("time_ms must be 1 to %d", maxRenderTimeMs))
		}
		p.TimeMs = *b.TimeMs
	}
	return nil
}

func (p *renderPlan) options(req *renderRequest) error {
	if req.RiskProfile != nil && req.RiskProfile.Level != nil {
		p.Risk = *req.RiskProfile.Level
	}
	policy, ok := riskLevels[p.Risk]
	if !ok {
		return badRender(renderUnknownRisk, "risk_profile.level",
			fmt.Sprintf("Unknown risk level %q; use low, medium or high", p.Risk))
	}
	p.policy = policy
	if req.PrivacyMode != nil {
		if _, err := pack.ParsePrivacy(*req.PrivacyMode); err != nil {
			return badRender(renderUnknownPrivacy, "privacy_mode",
				fmt.Sprintf("Unknown privacy mode %q; use allow, redact or exclude", *req.PrivacyMode))
		}
		p.Privacy = *req.PrivacyMode
	}
	if req.Encoding != nil {
		p.Encoding = *req.Encoding
	}
	tok, err := pack.NewTokenizer(p.Encoding)
	if errors.Is(err, pack.ErrUnknownEncoding) {
		return badRender(renderUnknownEncoding, "encoding",
			fmt.Sprintf("Unknown encoding %q; use %s", p.Encoding, strings.Join(pack.Encodings(), " or ")))
	}
	if err != nil {
		return err
	}
	p.tok = tok
	return nil
}

func (p *renderPlan) domains(req *renderRequest) error {
	if len(req.Domains) > maxRenderDomains {
		return badRender(renderInvalidField, "domains", fmt.Sprintf("domains must have at most %d items", maxRenderDomains))
	}
	for i, d := range req.Domains {
		field := fmt.Sprintf("domains.%d", i)
		if utf8.RuneCountInString(d) > maxDomain || d == "" {
			return badRender(renderInvalidField, field, fmt.Sprintf("A domain is 1 to %d characters", maxDomain))
		}
		if _, _, err := classifyDomain(d); err != nil {
			re := badRender(renderInvalidField, field, err.Message)
			re.status = err.Status
			if err.Status == 403 {
				re.code = renderForbidden
			}
			return re
		}
	}
	p.Domains = unionStrings(req.Domains)
	return nil
}

// hash identifies the request behind a request_id: a repeat must match it.
func (p *renderPlan) hash() [32]byte {
	b, _ := json.Marshal(p)
	return sha256.Sum256(b)
}

// candidateCount is how many memories the search returns for a budget.
func candidateCount(tokensMax int) int {
	return min(max(tokensMax/tokensPerCand, minCandidates), maxCandidates)
}

// render searches, packs and encodes the reply of plan.
// shown lists the memories the context includes.
func (s *Server) render(c *call, p *renderPlan, start time.Time) (body []byte, shown []shownAtom, err error) {
	scopes, err := s.renderScopes(c, p)
	if err != nil {
		return nil, nil, err
	}
	found, tenants, err := s.renderSearch(c, p, scopes)
	if err != nil {
		return nil, nil, err
	}
	cands, omitted, redactions := p.candidates(found)
	res := pack.Pack(cands, p.TokensMax, p.tok)
	reply := p.reply(res, found, omitted, redactions)
	reply.Usage.ElapsedMs = msSince(start)
	reply.Usage.TimeTargetMet = reply.Usage.ElapsedMs <= float64(p.TimeMs)
	for _, sec := range reply.Sections {
		for _, it := range sec.Items {
			if id, err := raftfsm.ParseID(it.AtomID); err == nil {
				shown = append(shown, shownAtom{tenant: tenants[it.AtomID], id: id})
			}
		}
	}
	body, err = sonic.Marshal(reply)
	return body, shown, err
}

// renderScope is one tenant to search and its domains (nil: all).
type renderScope struct {
	tenant  string
	domains []string
}

// renderScopes resolves the domains extension: private domains are read in
// the caller's account, each room address in its room after the membership
// check; no domains means every private domain of the caller.
func (s *Server) renderScopes(c *call, p *renderPlan) ([]renderScope, error) {
	if len(p.Domains) == 0 {
		return []renderScope{{tenant: c.org}}, nil
	}
	own := renderScope{tenant: c.org}
	var rooms []renderScope
	for i, d := range p.Domains {
		kind, id, _ := classifyDomain(d)
		if kind != domainRoom {
			own.domains = append(own.domains, d)
			continue
		}
		tenant, err := s.roomTenant(c, id, false)
		if err != nil {
			if re := s.asRenderError(c, err); re.status < 500 {
				re.field = fmt.Sprintf("domains.%d", i)
				return nil, re
			}
			return nil, err
		}
		rooms = append(rooms, renderScope{tenant: tenant})
	}
	if own.domains != nil {
		rooms = append([]renderScope{own}, rooms...)
	}
	return rooms, nil
}

// renderSearch runs the read pipeline (semantic, concepts, associations,
// MMR diversity) in every scope and merges the results by relevance;
// tenants maps each result's atom ID to the account it was found in.
func (s *Server) renderSearch(c *call, p *renderPlan, scopes []renderScope) (found []memoryItemJSON, tenants map[string]string, err error) {
	floor := p.policy.floor
	if p.policy.pin {
		floor = min(floor, p.policy.pinFloor)
	}
	k, div := candidateCount(p.TokensMax), renderDiversity
	tenants = map[string]string{}
	var out []memoryItemJSON
	for _, sc := range scopes {
		plan := validateRead(&validator{}, &readRequest{Query: &p.Intent, TopK: &k, MinRelevance: &floor,
			Diversity: &div}, nil)
		plan.req.Tenant, plan.req.Domains = sc.tenant, sc.domains
		plan.req.HideReplaced = c.settings.HideReplaced
		res, err := s.search(c, plan)
		if err != nil {
			return nil, nil, err
		}
		for _, it := range res.Items {
			if _, seen := tenants[it.AtomID]; !seen {
				tenants[it.AtomID] = sc.tenant
				out = append(out, it)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Relevance > out[j].Relevance })
	return out, tenants, nil
}

// candidates applies the risk level and the privacy mode to the search
// results: what goes to the packer, what is left out before it, and how
// many spans were masked.
func (p *renderPlan) candidates(found []memoryItemJSON) ([]pack.Candidate, []pack.Omission, int) {
	var cands []pack.Candidate
	var omitted []pack.Omission
	redactions := 0
	for i := range found {
		it := &found[i]
		sec := pack.Classify(pack.Memory{Content: it.Content, Concepts: it.Concepts, Metadata: it.Metadata,
			Valence: it.Valence})
		c := pack.Candidate{ID: it.AtomID, Text: it.Content, Relevance: it.Relevance, Section: sec}
		c.Pinned = p.policy.pin && sec == pack.Warnings && it.Relevance >= p.policy.pinFloor
		if !c.Pinned && it.Relevance < p.policy.floor-floorSlack {
			omitted = append(omitted, pack.Omission{Candidate: c, Reason: pack.ReasonRelevanceFloor})
			continue
		}
		text, keep, masked := pack.ApplyPrivacy(pack.Privacy(p.Privacy), it.Content)
		if !keep {
			omitted = append(omitted, pack.Omission{Candidate: c, Reason: pack.ReasonPrivacy})
			continue
		}
		redactions += masked
		c.Text = text
		cands = append(cands, c)
	}
	return cands, omitted, redactions
}
