package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router/ratelimit"
	"github.com/hebbdb/hebb/router/vault"
)

// Scopes the server grants (interface §5 item 4).
const (
	ScopeOpenID        = "openid"
	ScopeProfile       = "profile"
	ScopeEmail         = "email"
	ScopeMemoryRead    = "memory:read"
	ScopeMemoryWrite   = "memory:write"
	ScopeOfflineAccess = cluster.ScopeOfflineAccess
)

var supportedScopes = []string{ScopeOpenID, ScopeProfile, ScopeEmail, ScopeMemoryRead, ScopeMemoryWrite, ScopeOfflineAccess}

// defaultScopes are granted when an authorization request names none.
var defaultScopes = []string{ScopeMemoryRead, ScopeMemoryWrite}

// Lifetimes.
const (
	codeTTL    = 10 * time.Minute
	ticketTTL  = 10 * time.Minute
	accessTTL  = time.Hour
	refreshTTL = 30 * 24 * time.Hour
)

// Prefixes of the opaque secrets this server mints.
const (
	accessPrefix  = "hat_"
	refreshPrefix = "hrt_"
	codePrefix    = "hac_"
	clientPrefix  = "hcl_"
	secretPrefix  = "hcs_"
)

// Backend is what the server needs from the cluster: the meta state and a
// way to replicate meta commands.
type Backend interface {
	Meta() *cluster.Meta
	ProposeMeta(ctx context.Context, cmd []byte) (any, error)
}

// Config configures the server.
type Config struct {
	// Issuer is the public URL of the service (no trailing slash); the
	// endpoints live under Issuer/oauth.
	Issuer string
	// Resource is the protected resource tokens are for: the connector URL.
	Resource string
	// RedirectHosts are the hosts (exact, or "*.example.com") a client may
	// register redirect URIs on; loopback hosts are always allowed.
	RedirectHosts []string
	Logger        *slog.Logger
	// Keys seals the signing key before it enters the meta group's log and
	// opens it when read; nil records it in clear.
	Keys *vault.Ring

	// Session resolves the person a browser request is signed in as (the
	// web console's session): the org the tokens will resolve to and the
	// user. nil: people sign in with an API key only.
	Session func(r *http.Request) (org, user string, ok bool)
	// SignInURL is the page where a browser without a session signs in,
	// coming back to next (a path on this site) afterwards. With Session,
	// a signed-out authorization request is sent there.
	SignInURL func(next string) string
	// Render writes body inside the host's page layout, so that the
	// authorization pages look like the rest of the site; the server has
	// set the security headers. nil: a plain page of this package's own.
	Render func(w http.ResponseWriter, r *http.Request, status int, title string, body template.HTML)
}

// Server is the authorization server.
type Server struct {
	cfg     Config
	backend Backend
	log     *slog.Logger
	mux     *http.ServeMux

	regs *ratelimit.Limiter // registrations per client address

	mu  sync.Mutex
	sig *signer // loaded on first use
}

// New returns the server; Handler serves it.
func New(cfg Config, b Backend) *Server {
	cfg.Issuer = strings.TrimRight(cfg.Issuer, "/")
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{cfg: cfg, backend: b, log: cfg.Logger, mux: http.NewServeMux(),
		regs: ratelimit.New(registerWindow, registerMaxKeys, time.Now)}
	s.routes()
	return s
}

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /.well-known/oauth-authorization-server", s.cors(s.serverMetadata))
	m.HandleFunc("GET /.well-known/openid-configuration", s.cors(s.serverMetadata))
	m.HandleFunc("GET /.well-known/oauth-protected-resource", s.cors(s.resourceMetadata))
	m.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.cors(s.resourceMetadata))
	m.HandleFunc("GET /oauth/authorize", s.authorizePage)
	m.HandleFunc("POST /oauth/authorize", s.authorizeSubmit)
	m.HandleFunc("POST /oauth/token", s.cors(s.token))
	m.HandleFunc("POST /oauth/register", s.cors(s.register))
	m.HandleFunc("POST /oauth/revoke", s.cors(s.revoke))
	m.HandleFunc("GET /oauth/jwks", s.cors(s.jwks))
	m.HandleFunc("GET /oauth/userinfo", s.cors(s.userinfo))
	m.HandleFunc("POST /oauth/userinfo", s.cors(s.userinfo))
	m.HandleFunc("OPTIONS /", s.preflight)
	m.HandleFunc("/", notFound)
}

// Handler serves /oauth/* and /.well-known/*.
func (s *Server) Handler() http.Handler {
	if !strings.HasPrefix(s.cfg.Issuer, "https://") {
		return s.mux
	}
	// Served over https, every answer keeps browsers on it, as the
	// console's do: the consent page carries the console's session.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=31536000")
		s.mux.ServeHTTP(w, r)
	})
}

// ResourceMetadataURL is the protected-resource metadata address that a
// 401 of the connector names.
func (s *Server) ResourceMetadataURL() string {
	return s.cfg.Issuer + "/.well-known/oauth-protected-resource"
}

// Grant is what a valid access token grants.
type Grant struct {
	OrgID      string
	UserID     string // the console user who granted it; "" for an API-key sign-in
	ClientID   string
	ClientName string
	Scopes     []string
	ExpiresAt  time.Time
}

// Verify resolves an access token to its grant, or ErrInvalidToken.
func (s *Server) Verify(ctx context.Context, token string) (Grant, error) {
	if !strings.HasPrefix(token, accessPrefix) {
		return Grant{}, ErrInvalidToken
	}
	var g cluster.OAuthGrant
	var ok bool
	meta := s.backend.Meta()
	meta.Synced(ctx, func() bool { g, ok = meta.OAuthAccess(hashSecret(token), time.Now()); return ok })
	if !ok || g.Resource != "" && g.Resource != s.cfg.Resource {
		return Grant{}, ErrInvalidToken
	}
	if g.UserID != "" {
		if _, member := s.role(g.OrgID, g.UserID); !member {
			return Grant{}, ErrInvalidToken // removed from the workspace since
		}
		g.Scopes = s.roleScopes(g.OrgID, g.UserID, g.Scopes)
	}
	out := Grant{OrgID: g.OrgID, UserID: g.UserID, ClientID: g.ClientID, Scopes: g.Scopes, ExpiresAt: g.ExpiresAt}
	if c, ok := meta.OAuthClient(g.ClientID); ok {
		out.ClientName = c.Name
	}
	return out, nil
}

func (s *Server) serverMetadata(w http.ResponseWriter, _ *http.Request) {
	i := s.cfg.Issuer
	methods := []string{"none", "client_secret_basic", "client_secret_post"}
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         i,
		"authorization_endpoint":                         i + "/oauth/authorize",
		"token_endpoint":                                 i + "/oauth/token",
		"registration_endpoint":                          i + "/oauth/register",
		"revocation_endpoint":                            i + "/oauth/revoke",
		"jwks_uri":                                       i + "/oauth/jwks",
		"userinfo_endpoint":                              i + "/oauth/userinfo",
		"scopes_supported":                               supportedScopes,
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported":          methods,
		"revocation_endpoint_auth_methods_supported":     methods,
		"code_challenge_methods_supported":               []string{"S256"},
		"authorization_response_iss_parameter_supported": true,
		"subject_types_supported":                        []string{"public"},
		"id_token_signing_alg_values_supported":          []string{"RS256"},
		"claims_supported":                               []string{"sub", "iss", "aud", "azp", "exp", "iat", "auth_time", "nonce", "name", "email"},
	})
}

func (s *Server) resourceMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"resource":                 s.cfg.Resource,
		"authorization_servers":    []string{s.cfg.Issuer},
		"scopes_supported":         supportedScopes,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "hebb memory",
	})
}

// cors lets browser-based clients call an endpoint from any origin; these
// endpoints take no ambient credentials.
func (s *Server) cors(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		h(w, r)
	}
}

func (s *Server) preflight(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
	h.Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
}

func notFound(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusNotFound, map[string]any{"code": "NOT_FOUND", "message": "Not found",
		"requestId": nil, "retryable": false, "details": nil})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "cannot encode response", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeOAuthError answers an OAuth error (RFC 6749 §5.2).
func writeOAuthError(w http.ResponseWriter, e *oauthError) {
	if e.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="hebb"`)
	}
	writeJSON(w, e.Status, e)
}

// newSecret returns prefix + 32 random bytes, base64url.
func newSecret(prefix string) string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// newID returns a short random identifier.
func newID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// hashSecret is how codes, tokens and client secrets are stored.
func hashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// s256 is the PKCE S256 transform of a verifier.
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// propose replicates a meta command and returns its result, an error result
// turned into the returned error.
func (s *Server) propose(ctx context.Context, cmd []byte) (any, error) {
	res, err := s.backend.ProposeMeta(ctx, cmd)
	if err != nil {
		return nil, err
	}
	if e, ok := res.(error); ok {
		return nil, e
	}
	return res, nil
}

// role returns a console user's role in org, and whether they are in it.
func (s *Server) role(org, user string) (string, bool) {
	u, ok := s.backend.Meta().ConsoleUser(user)
	if !ok {
		return "", false
	}
	r := u.Role(org)
	return r, r != ""
}

// roleScopes bounds scopes by what the person who signed in may do in the
// workspace: a member looks (README, "Console"), so a member's consent, or
// a token granted by an owner since made a member, carries no
// memory:write. A sign-in with an API key (user "") keeps them all.
func (s *Server) roleScopes(org, user string, scopes []string) []string {
	if user == "" {
		return scopes
	}
	if r, _ := s.role(org, user); r == cluster.ConsoleRoleOwner {
		return scopes
	}
	out := make([]string, 0, len(scopes))
	for _, sc := range scopes {
		if sc != ScopeMemoryWrite {
			out = append(out, sc)
		}
	}
	return out
}
