package oauth

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router/ratelimit"
)

// Bounds of a registration.
const (
	maxRedirectURIs = 10
	maxURILen       = 2000
	maxClientName   = 200
	maxFormBytes    = 64 << 10
)

// Registrations a client address may make per window on one node: an
// unauthenticated endpoint whose every call is a replicated record (swept
// only once unused for a day) must not let one address fill the meta group.
const (
	maxRegistrations = 20
	registerWindow   = 15 * time.Minute
	registerMaxKeys  = 100_000
)

// registration is the part of RFC 7591 client metadata this server reads;
// other fields are accepted and ignored.
type registration struct {
	RedirectURIs  []string `json:"redirect_uris"`
	ClientName    string   `json:"client_name"`
	GrantTypes    []string `json:"grant_types"`
	ResponseTypes []string `json:"response_types"`
	AuthMethod    string   `json:"token_endpoint_auth_method"`
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	addr := ratelimit.ClientAddr(r)
	if blocked, wait := s.regs.Blocked(addr, maxRegistrations); blocked {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		writeOAuthError(w, errorf(http.StatusTooManyRequests, "temporarily_unavailable",
			"Too many client registrations from this address; retry later"))
		return
	}
	var req registration
	body, err := io.ReadAll(io.LimitReader(r.Body, maxFormBytes+1))
	if err == nil && len(body) > maxFormBytes {
		writeOAuthError(w, errorf(http.StatusRequestEntityTooLarge, "invalid_client_metadata",
			"Body exceeds "+strconv.Itoa(maxFormBytes)+" bytes"))
		return
	}
	if err != nil || json.Unmarshal(body, &req) != nil {
		writeOAuthError(w, errorf(http.StatusBadRequest, "invalid_client_metadata", "Body must be a JSON object"))
		return
	}
	client, oerr := s.newClient(&req)
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	secret := ""
	if client.AuthMethod != "none" {
		secret = newSecret(secretPrefix)
		client.SecretHash = hashSecret(secret)
	}
	s.regs.Add(addr) // valid registrations count: rejected ones store nothing
	if _, err := s.propose(r.Context(), cluster.EncodeOAuthRegisterClient(cluster.OAuthRegisterClient{
		Client: client, Now: client.CreatedAt})); err != nil {
		s.log.Error("oauth register", "err", err)
		writeOAuthError(w, errorf(http.StatusServiceUnavailable, "temporarily_unavailable", "Registration failed; retry"))
		return
	}
	out := map[string]any{
		"client_id":                  client.ClientID,
		"client_id_issued_at":        client.CreatedAt.Unix(),
		"client_name":                client.Name,
		"redirect_uris":              client.RedirectURIs,
		"grant_types":                client.GrantTypes,
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": client.AuthMethod,
		"scope":                      strings.Join(supportedScopes, " "),
	}
	if secret != "" {
		out["client_secret"], out["client_secret_expires_at"] = secret, 0
	}
	writeJSON(w, http.StatusCreated, out)
}

// newClient validates a registration and returns the client to store.
func (s *Server) newClient(req *registration) (cluster.OAuthClient, *oauthError) {
	bad := func(code, format string, a ...any) (cluster.OAuthClient, *oauthError) {
		return cluster.OAuthClient{}, errorf(http.StatusBadRequest, code, fmt.Sprintf(format, a...))
	}
	if len(req.RedirectURIs) == 0 || len(req.RedirectURIs) > maxRedirectURIs {
		return bad("invalid_redirect_uri", "redirect_uris must list 1 to %d URIs", maxRedirectURIs)
	}
	for _, u := range req.RedirectURIs {
		if err := s.redirectAllowed(u); err != nil {
			return bad("invalid_redirect_uri", "%v", err)
		}
	}
	if len([]rune(req.ClientName)) > maxClientName {
		return bad("invalid_client_metadata", "client_name is longer than %d characters", maxClientName)
	}
	grants := req.GrantTypes
	if len(grants) == 0 {
		grants = []string{"authorization_code", "refresh_token"}
	}
	for _, g := range grants {
		if g != "authorization_code" && g != "refresh_token" {
			return bad("invalid_client_metadata", "grant type %q is not supported", g)
		}
	}
	for _, rt := range req.ResponseTypes {
		if rt != "code" {
			return bad("invalid_client_metadata", "response type %q is not supported", rt)
		}
	}
	method := req.AuthMethod
	switch method {
	case "":
		method = "client_secret_basic" // the RFC 7591 default
	case "none", "client_secret_basic", "client_secret_post":
	default:
		return bad("invalid_client_metadata", "token_endpoint_auth_method %q is not supported", method)
	}
	return cluster.OAuthClient{ClientID: newID(clientPrefix), Name: strings.TrimSpace(req.ClientName),
		RedirectURIs: slices.Clone(req.RedirectURIs), GrantTypes: slices.Compact(slices.Sorted(slices.Values(grants))),
		AuthMethod: method, CreatedAt: time.Now().UTC()}, nil
}

// redirectAllowed checks a redirect URI against the host policy: http(s)
// on a loopback host always; https or a private-use scheme on an
// allowlisted host; nothing else.
func (s *Server) redirectAllowed(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || len(raw) > maxURILen || !u.IsAbs() || u.Fragment != "" || u.Opaque != "" {
		return fmt.Errorf("redirect URI %q is not an absolute URI without a fragment", raw)
	}
	if u.User != nil {
		// https://evil.example@app.example.com/cb goes to the allowlisted
		// host, but the consent page would name the other one first.
		return fmt.Errorf("redirect URI %q must not carry a user name or password", raw)
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname())
	switch scheme {
	case "javascript", "data", "file", "vbscript", "blob", "about":
		return fmt.Errorf("redirect URI scheme %q is not allowed", scheme)
	}
	if isLoopback(host) && (scheme == "http" || scheme == "https") {
		return nil
	}
	if scheme == "http" {
		return fmt.Errorf("redirect URI %q: plain http is allowed only on a loopback host", raw)
	}
	if scheme != "https" && !strings.Contains(scheme, ".") {
		// A private-use scheme is a reversed domain name (RFC 8252 §7.1);
		// ftp: or ws: on an allowed host is neither.
		return fmt.Errorf("redirect URI scheme %q is not allowed: use https or a private-use scheme (com.example.app)", scheme)
	}
	if host == "" {
		// RFC 8252 §7.1's com.example.app:/path has no host to check; said
		// as "redirect host \"\"" it read like a server fault.
		return fmt.Errorf("redirect URI %q names no host: this server takes https, or a private-use scheme, only on a host "+
			"its operator allows (--oauth-redirect-hosts), as in com.example.app://allowed.example/callback", raw)
	}
	if !s.hostAllowed(host) {
		return fmt.Errorf("redirect host %q is not allowed on this server (operator flag --oauth-redirect-hosts)", host)
	}
	return nil
}

func (s *Server) hostAllowed(host string) bool {
	for _, h := range s.cfg.RedirectHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		switch {
		case h == "":
		case strings.HasPrefix(h, "*."):
			if strings.HasSuffix(host, h[1:]) && len(host) > len(h)-1 {
				return true
			}
		case h == host:
			return true
		}
	}
	return false
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// redirectMatches tells whether the redirect_uri of an authorization request
// is one the client registered. A loopback http(s) URI matches on any port
// (RFC 8252 §7.3); every other URI must be identical.
func redirectMatches(registered []string, got string) bool {
	if slices.Contains(registered, got) {
		return true
	}
	g, err := url.Parse(got)
	if err != nil || !isLoopback(g.Hostname()) || g.Fragment != "" || strings.Contains(got, "#") || g.User != nil {
		return false
	}
	for _, r := range registered {
		u, err := url.Parse(r)
		if err == nil && isLoopback(u.Hostname()) && u.Scheme == g.Scheme && u.Hostname() == g.Hostname() &&
			u.Path == g.Path && u.RawQuery == g.RawQuery {
			return true
		}
	}
	return false
}
