package chat

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hebbdb/hebb/cluster"
)

// OpenID Connect sign-in: POST /api/auth/sign-in/oauth2 answers the
// provider's authorization URL and sets a sealed state cookie (state,
// PKCE verifier, nonce, where to send the browser after, and the guest to
// upgrade); the provider sends the browser to the callback, which checks
// the state, redeems the code, verifies the id_token and signs in.
const (
	stateCookie = "hebb_chat.oidc_state"
	providerID  = "oidc"
	stateTTL    = 10 * time.Minute
	authPath    = "/api/auth"
)

type oidcState struct {
	State         string `json:"s"`
	Verifier      string `json:"v"`
	Nonce         string `json:"n"`
	Callback      string `json:"cb,omitempty"`
	ErrorCallback string `json:"ecb,omitempty"`
	Upgrade       string `json:"u,omitempty"` // the guest this sign-in upgrades
	Exp           int64  `json:"exp"`
}

type oidcBody struct {
	ProviderID       *string `json:"providerId"`
	CallbackURL      *string `json:"callbackURL"`
	ErrorCallbackURL *string `json:"errorCallbackURL"`
}

func (s *Server) redirectURI() string {
	return s.cfg.PublicURL + authPath + "/oauth2/callback/" + providerID
}

func (s *Server) signInOIDC(c *call) error {
	var body oidcBody
	if err := decodeBody(c.ctx.PostBody(), &body, true); err != nil {
		return err
	}
	var v validator
	if body.ProviderID != nil && *body.ProviderID != providerID {
		v.add("enum", "Input should be 'oidc'", "body", "providerId")
	}
	st := oidcState{State: randomString(16), Verifier: randomString(32), Nonce: randomString(16),
		Exp: c.now.Add(stateTTL).Unix()}
	st.Callback = s.checkRedirect(&v, "callbackURL", body.CallbackURL)
	st.ErrorCallback = s.checkRedirect(&v, "errorCallbackURL", body.ErrorCallbackURL)
	if err := v.err(); err != nil {
		return err
	}
	if s.oidc == nil {
		return notFound("No sign-in provider is configured").with("reason", "provider_not_configured")
	}
	if raw := sessionToken(c.ctx); raw != "" && s.resolveSession(c, raw) && c.user.Anonymous {
		st.Upgrade = c.user.ID
	}
	sum := sha256.Sum256([]byte(st.Verifier))
	u, err := s.oidc.authURL(c.std, s.redirectURI(), st.State, st.Nonce, b64.EncodeToString(sum[:]))
	if err != nil {
		return err
	}
	sealed, err := s.seal(c.std, st)
	if err != nil {
		return err
	}
	s.setCookie(c, stateCookie, sealed, stateTTL, authPath)
	return s.ok(c, map[string]any{"url": u, "redirect": true})
}

// checkRedirect accepts a relative path or an absolute URL on this
// surface's origin or a trusted one, and returns it absolute.
func (s *Server) checkRedirect(v *validator, field string, raw *string) string {
	if raw == nil || *raw == "" {
		return ""
	}
	r := *raw
	// Browsers drop tabs and line breaks from a URL ("/\t/x" is "//x"), and
	// a line break in Location would split the header: no control bytes.
	if strings.IndexFunc(r, unicode.IsControl) >= 0 {
		v.add("value_error", "Input should be a relative path or a URL on a trusted origin", "body", field)
		return ""
	}
	if strings.HasPrefix(r, "/") && !strings.HasPrefix(r, "//") && !strings.HasPrefix(r, "/\\") {
		return s.cfg.PublicURL + r
	}
	u, err := url.Parse(r)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		origin := u.Scheme + "://" + u.Host
		if origin == originOf(s.cfg.PublicURL) || slices.Contains(s.cfg.TrustedOrigins, origin) {
			return r
		}
	}
	v.add("value_error", "Input should be a relative path or a URL on a trusted origin", "body", field)
	return ""
}

func originOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Scheme + "://" + p.Host
}

func (s *Server) oidcCallback(c *call) error {
	if c.ctx.UserValue("providerId") != providerID {
		return notFound("Unknown sign-in provider")
	}
	q := c.ctx.QueryArgs()
	var st oidcState
	raw := string(c.ctx.Request.Header.Cookie(stateCookie))
	if raw == "" || s.unseal(raw, &st) != nil || st.Exp <= c.now.Unix() ||
		subtle.ConstantTimeCompare(q.Peek("state"), []byte(st.State)) != 1 {
		return unauthorized("invalid_state", "Sign-in state is missing, expired or does not match; start the sign-in again")
	}
	s.setCookie(c, stateCookie, "", 0, authPath)
	if e := q.Peek("error"); e != nil {
		return s.callbackFailed(c, st, string(e), string(q.Peek("error_description")))
	}
	code := string(q.Peek("code"))
	if code == "" {
		return validationError(fieldErr("missing", "Field required", "query", "code"))
	}
	if s.oidc == nil {
		return notFound("No sign-in provider is configured").with("reason", "provider_not_configured")
	}
	id, err := s.oidc.exchange(c.std, code, st.Verifier, s.redirectURI(), st.Nonce)
	if errors.Is(err, errCodeRefused) {
		return s.callbackFailed(c, st, "invalid_grant", "The sign-in code was already used or has expired; start the sign-in again")
	}
	if err != nil {
		if st.ErrorCallback != "" {
			s.log.Warn("sign-in provider", "err", err, "request_id", c.reqID)
			return s.callbackFailed(c, st, "provider_error", "")
		}
		return err
	}
	user := cluster.ChatUser{ID: newID(userPrefix), Name: displayName(id), Email: id.Email,
		EmailVerified: id.EmailVerified, Issuer: id.Issuer, Subject: id.Subject, CreatedAt: c.now}
	if len(id.Picture) <= maxImageURL && (strings.HasPrefix(id.Picture, "https://") || strings.HasPrefix(id.Picture, "http://")) {
		user.Image = id.Picture
	}
	tok, res, err := s.signIn(c, user, st.Upgrade)
	if err != nil {
		return err
	}
	if st.Callback != "" {
		return s.redirect(c, st.Callback)
	}
	out := s.signedInBody(tok, res)
	out["upgraded"], out["merged"] = res.Upgraded, res.Merged
	return s.ok(c, out)
}

// callbackFailed sends the browser to the error callback, or answers 401.
func (s *Server) callbackFailed(c *call, st oidcState, code, desc string) error {
	if st.ErrorCallback != "" {
		sep := "?"
		if strings.Contains(st.ErrorCallback, "?") {
			sep = "&"
		}
		return s.redirect(c, st.ErrorCallback+sep+url.Values{"error": {code}}.Encode())
	}
	e := unauthorized("provider_denied", "The sign-in provider refused the sign-in").with("error", code)
	if desc != "" {
		e.with("error_description", desc)
	}
	return e
}

func (s *Server) redirect(c *call, to string) error {
	c.ctx.Response.Header.Set("Location", to)
	c.ctx.Response.Header.Set("Cache-Control", "no-store")
	c.ctx.SetStatusCode(302)
	return nil
}

// displayName is the provider's name, else the e-mail's local part.
func displayName(id identity) string {
	name := strings.TrimSpace(id.Name)
	if name == "" {
		name, _, _ = strings.Cut(id.Email, "@")
	}
	if name == "" {
		name = "User"
	}
	for utf8.RuneCountInString(name) > maxDisplayName {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name
}
