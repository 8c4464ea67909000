package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hebbdb/hebb/cluster"
)

// authRequest is a validated authorization request.
type authRequest struct {
	ClientID    string   `json:"client_id"`
	RedirectURI string   `json:"redirect_uri"` // as the client sent it ("" when omitted)
	Redirect    string   `json:"redirect"`     // where the answer goes
	Scopes      []string `json:"scopes"`
	State       string   `json:"state,omitempty"`
	Challenge   string   `json:"code_challenge"`
	Resource    string   `json:"resource,omitempty"`
	Nonce       string   `json:"nonce,omitempty"`
	// PromptNone: the client asked for no page at all (OpenID Connect
	// Core §3.1.2.1), so the answer is an error redirect.
	PromptNone bool `json:"-"`
}

// ticket is the signed-in state carried from the sign-in to the consent
// form, sealed with the cluster's ticket key: it is what makes the consent
// form unforgeable.
type ticket struct {
	Request  authRequest `json:"req"`
	Org      string      `json:"org"`
	User     string      `json:"user,omitempty"` // the person signed in with a session; "" with an API key
	Key      string      `json:"key,omitempty"`  // the ID of the API key signed in with
	AuthTime int64       `json:"auth_time"`
	Expires  int64       `json:"exp"`
}

// hidden are the request parameters the sign-in form carries along.
var hidden = []string{"response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge",
	"code_challenge_method", "resource", "nonce"}

// parseAuthRequest validates an authorization request. With a nil request
// the error is shown on a page (unknown client or redirect URI: never
// redirect there); otherwise it is redirected to the client.
func (s *Server) parseAuthRequest(ctx context.Context, v url.Values) (*authRequest, cluster.OAuthClient, *oauthError) {
	if len(v["client_id"]) > 1 || len(v["redirect_uri"]) > 1 {
		return nil, cluster.OAuthClient{}, errorf(http.StatusBadRequest, "invalid_request", "client_id and redirect_uri must be given once")
	}
	client, ok := s.client(ctx, v.Get("client_id"))
	if !ok {
		return nil, client, errorf(http.StatusBadRequest, "invalid_client", "Unknown client_id: register the client first")
	}
	req := &authRequest{ClientID: client.ClientID, RedirectURI: v.Get("redirect_uri"), State: v.Get("state"),
		Challenge: v.Get("code_challenge"), Resource: v.Get("resource"), Nonce: v.Get("nonce")}
	switch {
	case req.RedirectURI == "" && len(client.RedirectURIs) == 1:
		req.Redirect = client.RedirectURIs[0]
	case req.RedirectURI == "":
		return nil, client, errorf(http.StatusBadRequest, "invalid_request", "redirect_uri is required")
	case !redirectMatches(client.RedirectURIs, req.RedirectURI):
		return nil, client, errorf(http.StatusBadRequest, "invalid_request", "redirect_uri is not registered for this client")
	default:
		req.Redirect = req.RedirectURI
	}
	bad := func(code, desc string) (*authRequest, cluster.OAuthClient, *oauthError) {
		return req, client, errorf(http.StatusFound, code, desc)
	}
	for _, name := range append(hidden, "prompt") {
		if len(v[name]) > 1 { // RFC 6749 §3.1: parameters must not be repeated
			return bad("invalid_request", name+" must not be repeated")
		}
	}
	if !slices.Contains(client.GrantTypes, "authorization_code") {
		return bad("unauthorized_client", "The client did not register the authorization_code grant")
	}
	if prompt := strings.Fields(v.Get("prompt")); slices.Contains(prompt, "none") {
		if len(prompt) > 1 {
			return bad("invalid_request", "prompt none cannot be combined with other values")
		}
		req.PromptNone = true
	}
	if v.Get("response_type") != "code" {
		return bad("unsupported_response_type", "response_type must be code")
	}
	if v.Get("code_challenge_method") != "S256" || !validChallenge(req.Challenge) {
		return bad("invalid_request", "PKCE is required: code_challenge with code_challenge_method S256")
	}
	scopes, err := parseScopes(v.Get("scope"))
	if err != nil {
		return bad("invalid_scope", err.Error())
	}
	req.Scopes = scopes
	if req.Resource != "" && strings.TrimRight(req.Resource, "/") != s.cfg.Resource {
		return bad("invalid_target", "resource must be "+s.cfg.Resource)
	}
	return req, client, nil
}

// validChallenge tells whether c can be an S256 code challenge (RFC 7636).
func validChallenge(c string) bool {
	if len(c) < 43 || len(c) > 128 {
		return false
	}
	for _, r := range c {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r)) {
			return false
		}
	}
	return true
}

// parseScopes splits a scope parameter; none gives the default scopes.
func parseScopes(raw string) ([]string, error) {
	fields := strings.Fields(raw)
	if len(fields) == 0 {
		return slices.Clone(defaultScopes), nil
	}
	var out []string
	for _, f := range fields {
		if !slices.Contains(supportedScopes, f) {
			return nil, errors.New("unknown scope " + f + "; supported: " + strings.Join(supportedScopes, " "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// keySignInParam, set to "key", asks for the API-key sign-in page even
// where people sign in through sessions.
const keySignInParam = "signin"

// authorizePage shows the consent page to a signed-in person, sends a
// signed-out one to sign in (and back here), and shows the API-key sign-in
// where there are no sessions or when asked for.
func (s *Server) authorizePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req, client, oerr := s.parseAuthRequest(r.Context(), q)
	if oerr != nil {
		s.authFailed(w, r, req, oerr)
		return
	}
	if req.PromptNone {
		// No page may be shown; consent is asked every time, so a person
		// signed in still needs one.
		code, desc := "login_required", "The user is not signed in"
		if s.cfg.Session != nil {
			if _, _, ok := s.cfg.Session(r); ok {
				code, desc = "consent_required", "The user must approve this client"
			}
		}
		s.authFailed(w, r, req, errorf(http.StatusFound, code, desc))
		return
	}
	if s.cfg.Session != nil && q.Get(keySignInParam) != "key" {
		if org, user, ok := s.cfg.Session(r); ok {
			s.showConsent(w, r, req, client, signedIn{org: org, user: user})
			return
		}
		if s.cfg.SignInURL != nil {
			w.Header().Set("Cache-Control", "no-store")
			http.Redirect(w, r, s.cfg.SignInURL(r.URL.RequestURI()), http.StatusFound)
			return
		}
	}
	s.keySignInPage(w, r, http.StatusOK, client, q, "")
}

func (s *Server) authorizeSubmit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		s.errorPage(w, r, http.StatusBadRequest, "The form could not be read.")
		return
	}
	if r.PostForm.Get("step") == "consent" {
		s.consent(w, r)
		return
	}
	s.signIn(w, r)
}

// consent issues the code (allow) or the access_denied answer (deny).
func (s *Server) consent(w http.ResponseWriter, r *http.Request) {
	g, err := s.signer(r.Context())
	var t ticket
	if err != nil || !g.open(r.PostForm.Get("ticket"), &t) || time.Now().Unix() > t.Expires {
		s.errorPage(w, r, http.StatusBadRequest, "The sign-in has expired or is not valid.")
		return
	}
	req := &t.Request
	if r.PostForm.Get("decision") != "allow" {
		s.redirect(w, r, req, url.Values{"error": {"access_denied"}, "error_description": {"The account owner denied access"}})
		return
	}
	if t.User != "" && !s.sameSession(r, t) {
		s.errorPage(w, r, http.StatusBadRequest, "You signed out or switched workspace since this page was shown.")
		return
	}
	code := newSecret(codePrefix)
	now := time.Now().UTC()
	_, err = s.propose(r.Context(), cluster.EncodeOAuthIssueCode(cluster.OAuthIssueCode{Now: now, Code: cluster.OAuthCode{
		Hash: hashSecret(code), ClientID: req.ClientID, OrgID: t.Org, RedirectURI: req.RedirectURI,
		Scopes: s.roleScopes(t.Org, t.User, req.Scopes), Challenge: req.Challenge,
		Resource: strings.TrimRight(req.Resource, "/"), Nonce: req.Nonce, KeyID: t.Key, UserID: t.User,
		AuthTime: time.Unix(t.AuthTime, 0).UTC(), ExpiresAt: now.Add(codeTTL)}}))
	if err != nil {
		s.log.Error("oauth issue code", "err", err)
		s.redirect(w, r, req, url.Values{"error": {"temporarily_unavailable"}})
		return
	}
	s.redirect(w, r, req, url.Values{"code": {code}})
}

// authFailed shows a page for errors that must not redirect, and redirects
// the others to the client.
func (s *Server) authFailed(w http.ResponseWriter, r *http.Request, req *authRequest, e *oauthError) {
	if req == nil {
		s.errorPage(w, r, e.Status, e.Description)
		return
	}
	s.redirect(w, r, req, url.Values{"error": {e.Code}, "error_description": {e.Description}})
}

// redirect answers the client at its redirect URI with params, state and
// iss (RFC 9207).
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, req *authRequest, params url.Values) {
	u, err := url.Parse(req.Redirect)
	if err != nil {
		s.errorPage(w, r, http.StatusBadRequest, "The redirect URI is not valid.")
		return
	}
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	if req.State != "" {
		q.Set("state", req.State)
	}
	q.Set("iss", s.cfg.Issuer)
	u.RawQuery = q.Encode()
	status := http.StatusFound
	if r.Method == http.MethodPost {
		status = http.StatusSeeOther
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.String(), status)
}

func hiddenFields(v url.Values) map[string]string {
	out := map[string]string{}
	for _, k := range hidden {
		if x := v.Get(k); x != "" {
			out[k] = x
		}
	}
	return out
}

func clientLabel(c cluster.OAuthClient) string {
	if c.Name != "" {
		return c.Name
	}
	return c.ClientID
}
