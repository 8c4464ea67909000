package oauth

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hebbdb/hebb/cluster"
)

// token is the token endpoint: authorization_code and refresh_token grants.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	client, oerr := s.clientAuth(w, r)
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	f := r.PostForm
	for _, rs := range f["resource"] { // RFC 8707: the connector is the one resource
		if strings.TrimRight(rs, "/") != s.cfg.Resource {
			writeOAuthError(w, errorf(http.StatusBadRequest, "invalid_target", "resource must be "+s.cfg.Resource))
			return
		}
	}
	var (
		res   cluster.OAuthIssued
		pair  issuedPair
		nonce string
	)
	switch f.Get("grant_type") {
	case "authorization_code":
		res, pair, oerr = s.redeemCode(r, client)
		nonce = res.Nonce
	case "refresh_token":
		res, pair, oerr = s.refresh(r, client)
	case "":
		oerr = errorf(http.StatusBadRequest, "invalid_request", "grant_type is required")
	default:
		oerr = errorf(http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
	}
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	// The scopes the token carries now: a person made a member since the
	// consent holds no memory:write, whatever the grant recorded (RFC 6749
	// §5.1; Verify refuses it the same way).
	scopes := s.roleScopes(res.Grant.OrgID, res.Grant.UserID, res.Grant.Scopes)
	out := map[string]any{"access_token": pair.access, "token_type": "Bearer",
		"expires_in": int(accessTTL / time.Second), "scope": strings.Join(scopes, " ")}
	if res.Refresh {
		out["refresh_token"] = pair.refresh
	}
	if slices.Contains(res.Grant.Scopes, ScopeOpenID) {
		idToken, err := s.idToken(r, res.Grant, nonce)
		if err != nil {
			s.log.Error("oauth id_token", "err", err)
			writeOAuthError(w, errorf(http.StatusServiceUnavailable, "temporarily_unavailable", "Cannot sign the id_token"))
			return
		}
		out["id_token"] = idToken
	}
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, out)
}

// issuedPair are the raw tokens of one issuance.
type issuedPair struct{ access, refresh string }

func newPair(now time.Time) (issuedPair, cluster.NewOAuthToken, cluster.NewOAuthToken) {
	p := issuedPair{access: newSecret(accessPrefix), refresh: newSecret(refreshPrefix)}
	return p, cluster.NewOAuthToken{Hash: hashSecret(p.access), ExpiresAt: now.Add(accessTTL)},
		cluster.NewOAuthToken{Hash: hashSecret(p.refresh), ExpiresAt: now.Add(refreshTTL)}
}

func (s *Server) redeemCode(r *http.Request, client cluster.OAuthClient) (cluster.OAuthIssued, issuedPair, *oauthError) {
	f := r.PostForm
	if !slices.Contains(client.GrantTypes, "authorization_code") {
		return cluster.OAuthIssued{}, issuedPair{}, errorf(http.StatusBadRequest, "unauthorized_client", "The client may not use this grant")
	}
	code, verifier := f.Get("code"), f.Get("code_verifier")
	if code == "" || verifier == "" {
		return cluster.OAuthIssued{}, issuedPair{}, errorf(http.StatusBadRequest, "invalid_request", "code and code_verifier are required")
	}
	if !validVerifier(verifier) {
		return cluster.OAuthIssued{}, issuedPair{}, errorf(http.StatusBadRequest, "invalid_request",
			"code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 §4.1)")
	}
	now := time.Now().UTC()
	pair, access, refresh := newPair(now)
	redeem := func(redirectURI string) (any, error) {
		return s.propose(r.Context(), cluster.EncodeOAuthRedeemCode(cluster.OAuthRedeemCode{CodeHash: hashSecret(code),
			ClientID: client.ClientID, RedirectURI: redirectURI, Challenge: s256(verifier),
			Family: newID("fam_"), Access: access, Refresh: refresh, Now: now}))
	}
	uri := f.Get("redirect_uri")
	res, err := redeem(uri)
	if errors.Is(err, cluster.ErrOAuthInvalidGrant) && uri != "" && slices.Equal(client.RedirectURIs, []string{uri}) {
		// The authorization request may have left out the client's only
		// redirect URI (OAuth 2.1 §4.1.1), recorded as "": sending it now
		// is not a mismatch (§4.1.3). A refused redemption changes nothing.
		res, err = redeem("")
	}
	if err != nil {
		return cluster.OAuthIssued{}, issuedPair{}, s.grantError(err)
	}
	return res.(cluster.OAuthIssued), pair, nil
}

func (s *Server) refresh(r *http.Request, client cluster.OAuthClient) (cluster.OAuthIssued, issuedPair, *oauthError) {
	f := r.PostForm
	if !slices.Contains(client.GrantTypes, "refresh_token") {
		return cluster.OAuthIssued{}, issuedPair{}, errorf(http.StatusBadRequest, "unauthorized_client", "The client did not register the refresh_token grant")
	}
	old := f.Get("refresh_token")
	if old == "" {
		return cluster.OAuthIssued{}, issuedPair{}, errorf(http.StatusBadRequest, "invalid_request", "refresh_token is required")
	}
	scopes := strings.Fields(f.Get("scope"))
	now := time.Now().UTC()
	pair, access, refresh := newPair(now)
	res, err := s.propose(r.Context(), cluster.EncodeOAuthRefresh(cluster.OAuthRefresh{RefreshHash: hashSecret(old),
		ClientID: client.ClientID, Scopes: scopes, Access: access, Refresh: refresh, Now: now}))
	if err != nil {
		return cluster.OAuthIssued{}, issuedPair{}, s.grantError(err)
	}
	return res.(cluster.OAuthIssued), pair, nil
}

// grantError maps a failed redemption or refresh.
func (s *Server) grantError(err error) *oauthError {
	msg, _, _ := strings.Cut(err.Error(), ": cluster:")
	switch {
	case errors.Is(err, cluster.ErrOAuthInvalidGrant):
		return errorf(http.StatusBadRequest, "invalid_grant", msg)
	case errors.Is(err, cluster.ErrOAuthInvalidScope):
		return errorf(http.StatusBadRequest, "invalid_scope", msg)
	}
	s.log.Error("oauth token", "err", err)
	return errorf(http.StatusServiceUnavailable, "temporarily_unavailable", "The token could not be issued; retry")
}

// clientAuth parses the form and authenticates the client: HTTP Basic or
// client_id (+ client_secret) in the body, as it registered.
func (s *Server) clientAuth(w http.ResponseWriter, r *http.Request) (cluster.OAuthClient, *oauthError) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return cluster.OAuthClient{}, errorf(http.StatusBadRequest, "invalid_request", "The body must be a form")
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	denied := errorf(http.StatusUnauthorized, "invalid_client", "Client authentication failed")
	client, ok := s.client(r.Context(), id)
	if !ok {
		return client, denied
	}
	if client.AuthMethod == "none" {
		return client, nil
	}
	got := hashSecret(secret)
	if secret == "" || subtle.ConstantTimeCompare([]byte(got), []byte(client.SecretHash)) != 1 {
		return client, denied
	}
	return client, nil
}

// revoke is RFC 7009: the token's whole grant is revoked; unknown tokens
// answer 200 as well, and another client's token 400 unauthorized_client
// (the RFC refuses a client the token was not issued to).
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	client, oerr := s.clientAuth(w, r)
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	tok := r.PostForm.Get("token")
	if tok == "" {
		writeOAuthError(w, errorf(http.StatusBadRequest, "invalid_request", "token is required"))
		return
	}
	if strings.HasPrefix(tok, accessPrefix) || strings.HasPrefix(tok, refreshPrefix) {
		res, err := s.propose(r.Context(), cluster.EncodeOAuthRevoke(cluster.OAuthRevoke{TokenHash: hashSecret(tok),
			ClientID: client.ClientID, Now: time.Now().UTC()}))
		if err != nil {
			s.log.Error("oauth revoke", "err", err)
			writeOAuthError(w, errorf(http.StatusServiceUnavailable, "temporarily_unavailable", "Revocation failed; retry"))
			return
		}
		if res == cluster.OAuthRevokeForeign {
			writeOAuthError(w, errorf(http.StatusBadRequest, "unauthorized_client", "The token was not issued to this client"))
			return
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

// idToken signs the OpenID Connect id_token of a grant.
func (s *Server) idToken(r *http.Request, g cluster.OAuthGrant, nonce string) (string, error) {
	sig, err := s.signer(r.Context())
	if err != nil {
		return "", err
	}
	now := time.Now()
	claims := map[string]any{"iss": s.cfg.Issuer, "aud": g.ClientID, "azp": g.ClientID,
		"iat": now.Unix(), "exp": now.Add(accessTTL).Unix(), "auth_time": g.AuthTime.Unix()}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	s.identity(claims, g.OrgID, g.UserID, g.Scopes)
	return sig.jwt(claims)
}

// identity adds the subject and the claims the scopes ask for. The subject
// is the person signed in at the console (their user ID), or the workspace
// for a sign-in with an API key: every person of a workspace had the
// workspace's subject, so a relying party such as the chat surface took
// them for one user.
func (s *Server) identity(claims map[string]any, org, user string, scopes []string) {
	claims["sub"] = org
	meta := s.backend.Meta()
	if user != "" {
		claims["sub"] = user
		if u, ok := meta.ConsoleUser(user); ok && slices.Contains(scopes, ScopeEmail) {
			claims["email"] = u.Email
		}
	}
	if slices.Contains(scopes, ScopeProfile) {
		if o, ok := meta.Org(org); ok {
			claims["name"] = o.Name
		}
	}
}

// userinfo is the OpenID Connect UserInfo endpoint.
func (s *Server) userinfo(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		// No credentials: a challenge without an error code (RFC 6750 §3.1).
		w.Header().Set("WWW-Authenticate", `Bearer`)
		writeJSON(w, http.StatusUnauthorized, errorf(0, "invalid_request", "An access token is required"))
		return
	}
	scheme, tok, _ := strings.Cut(auth, " ")
	g, err := s.Verify(r.Context(), strings.TrimSpace(tok))
	if !strings.EqualFold(scheme, "Bearer") || err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		writeJSON(w, http.StatusUnauthorized, errorf(0, "invalid_token", "The access token is not valid"))
		return
	}
	if !slices.Contains(g.Scopes, ScopeOpenID) {
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="openid"`)
		writeJSON(w, http.StatusForbidden, errorf(0, "insufficient_scope", "The token lacks the openid scope"))
		return
	}
	out := map[string]any{}
	s.identity(out, g.OrgID, g.UserID, g.Scopes)
	writeJSON(w, http.StatusOK, out)
}

// validVerifier reports whether a PKCE code_verifier has the length and
// characters RFC 7636 §4.1 requires: a short one adds no security.
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for _, c := range []byte(v) {
		ok := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~'
		if !ok {
			return false
		}
	}
	return true
}
