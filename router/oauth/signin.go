package oauth

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hebbdb/hebb/cluster"
)

// signedIn is who approves an authorization request: an org signed in
// with its API key (user ""), or a person signed in with a session, acting
// for the session's org.
type signedIn struct{ org, user, key string } // key: the ID of the API key signed in with

// keySignInPage shows the API-key sign-in form. Where people sign in
// through sessions, that sign-in is offered first and the key is the
// fallback, for accounts without people.
func (s *Server) keySignInPage(w http.ResponseWriter, r *http.Request, status int, client cluster.OAuthClient,
	params url.Values, msg string) {
	d := pageData{Client: clientLabel(client), Error: msg, Hidden: hiddenFields(params)}
	if s.cfg.Session != nil && s.cfg.SignInURL != nil {
		d.SignInURL = s.cfg.SignInURL(authorizeURI(r, params, false))
	}
	s.render(w, r, status, "Sign in", signInBody, d)
}

// signIn authenticates the account with its API key and shows the consent
// page.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	req, client, oerr := s.parseAuthRequest(r.Context(), f)
	if oerr != nil {
		s.authFailed(w, r, req, oerr)
		return
	}
	org, keyID, err := s.authenticate(r.Context(), strings.TrimSpace(f.Get("api_key")))
	if err != nil {
		msg := "That API key is not valid."
		if errors.Is(err, cluster.ErrRevokedKey) {
			msg = "That API key has been revoked."
		}
		s.keySignInPage(w, r, http.StatusUnauthorized, client, f, msg)
		return
	}
	s.showConsent(w, r, req, client, signedIn{org: org, key: keyID})
}

// showConsent seals the request and who signed in into a ticket and shows
// the consent page, which carries it.
func (s *Server) showConsent(w http.ResponseWriter, r *http.Request, req *authRequest, client cluster.OAuthClient,
	who signedIn) {
	g, err := s.signer(r.Context())
	if err != nil {
		s.log.Error("oauth signing key", "err", err)
		s.errorPage(w, r, http.StatusServiceUnavailable, "The service is unavailable; try again.")
		return
	}
	now := time.Now()
	sealed, err := g.seal(ticket{Request: *req, Org: who.org, User: who.user, Key: who.key, AuthTime: now.Unix(),
		Expires: now.Add(ticketTTL).Unix()})
	if err != nil {
		s.errorPage(w, r, http.StatusInternalServerError, "Cannot continue the sign-in.")
		return
	}
	meta := s.backend.Meta()
	d := pageData{Client: clientLabel(client), Account: who.org, Redirect: req.Redirect, Ticket: sealed}
	if o, ok := meta.Org(who.org); ok && o.Name != "" {
		d.Account = o.Name + " (" + who.org + ")"
	}
	for _, sc := range s.roleScopes(who.org, who.user, req.Scopes) {
		d.Scopes = append(d.Scopes, scopeText[sc]+" ("+sc+")")
	}
	if who.user != "" {
		d.Person = who.user
		if u, ok := meta.ConsoleUser(who.user); ok {
			d.Person = u.Email
		}
		d.KeyURL = authorizeURI(r, r.URL.Query(), true)
	}
	s.render(w, r, http.StatusOK, "Allow access", consentBody, d)
}

// sameSession tells whether r is still signed in as the person, and for
// the org, that the ticket was made for.
func (s *Server) sameSession(r *http.Request, t ticket) bool {
	if s.cfg.Session == nil {
		return false
	}
	org, user, ok := s.cfg.Session(r)
	return ok && org == t.Org && user == t.User
}

// authorizeURI is the address (path and query) of the authorization
// request in params, asking for the API-key sign-in when key.
func authorizeURI(r *http.Request, params url.Values, key bool) string {
	q := url.Values{}
	for k, v := range hiddenFields(params) {
		q.Set(k, v)
	}
	if key {
		q.Set(keySignInParam, "key")
	}
	return r.URL.Path + "?" + q.Encode()
}
