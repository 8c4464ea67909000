package cluster

import (
	"cmp"
	"encoding/gob"
	"fmt"
	"maps"
	"slices"
	"time"
)

// OAuth state of the meta group: the authorization server's registered
// clients, authorization codes, grants (token families) and hashed tokens,
// and the id_token signing key. It lives in the meta group so that every
// node can validate a token locally and any node can redeem a code another
// node issued.
//
// Invariants:
//   - Raw codes and tokens never enter the log: commands carry the hex
//     SHA-256 of each, computed by the router.
//   - Every command carries the time it was made (Now); expiry and pruning
//     compare against that time only, so replicas stay identical.
//   - A grant is a token family: every token rotated from one authorization
//     code. Revoking the family deletes the grant and all its tokens.

// Command types of the OAuth commands (the 32-39 range of meta commands).
const (
	cmdOAuthSetKey         byte = 32
	cmdOAuthRegisterClient byte = 33
	cmdOAuthIssueCode      byte = 34
	cmdOAuthRedeemCode     byte = 35
	cmdOAuthRefresh        byte = 36
	cmdOAuthRevoke         byte = 37
)

func init() {
	decoders[cmdOAuthSetKey] = decodeWith((*metaState).oauthSetKey)
	decoders[cmdOAuthRegisterClient] = decodeWith((*metaState).oauthRegisterClient)
	decoders[cmdOAuthIssueCode] = decodeWith((*metaState).oauthIssueCode)
	decoders[cmdOAuthRedeemCode] = decodeWith((*metaState).oauthRedeemCode)
	decoders[cmdOAuthRefresh] = decodeWith((*metaState).oauthRefresh)
	decoders[cmdOAuthRevoke] = decodeWith((*metaState).oauthRevoke)
	// Results and errors cross the node transport when a follower proposes.
	sentinels["oauth_client_exists"] = ErrOAuthClientExists
	sentinels["unknown_oauth_client"] = ErrUnknownOAuthClient
	sentinels["oauth_invalid_grant"] = ErrOAuthInvalidGrant
	sentinels["oauth_invalid_scope"] = ErrOAuthInvalidScope
	for _, v := range []any{OAuthKey{}, OAuthClient{}, OAuthIssued{}} {
		gob.Register(v)
	}
}

// Token kinds.
const (
	OAuthAccessToken  = "access"
	OAuthRefreshToken = "refresh"
)

// ScopeOfflineAccess is the scope without which no refresh token is issued.
const ScopeOfflineAccess = "offline_access"

// Retention of records whose own expiry does not bound them.
const (
	oauthSweepEvery      = time.Minute
	oauthUnusedClientTTL = 24 * time.Hour      // registered, never authorized
	oauthIdleClientTTL   = 90 * 24 * time.Hour // since its last code or refresh
)

// OAuthKey is the id_token signing key: an RSA private key, PKCS#8 DER.
type OAuthKey struct {
	KID        string    `json:"kid"`
	PrivateKey []byte    `json:"private_key"`
	CreatedAt  time.Time `json:"created_at"`
}

// OAuthClient is a dynamically registered client (RFC 7591).
type OAuthClient struct {
	ClientID     string    `json:"client_id"`
	Name         string    `json:"client_name,omitempty"`
	RedirectURIs []string  `json:"redirect_uris"`
	GrantTypes   []string  `json:"grant_types"`
	AuthMethod   string    `json:"token_endpoint_auth_method"`
	SecretHash   string    `json:"secret_sha256,omitempty"` // hex; empty for public clients
	CreatedAt    time.Time `json:"created_at"`
	LastUsedAt   time.Time `json:"last_used_at,omitzero"`
}

// OAuthCode is an issued authorization code, stored by its hash.
type OAuthCode struct {
	Hash        string    `json:"hash"`
	ClientID    string    `json:"client_id"`
	OrgID       string    `json:"org_id"`
	RedirectURI string    `json:"redirect_uri"`
	Scopes      []string  `json:"scopes"`
	Challenge   string    `json:"code_challenge"` // PKCE S256
	Resource    string    `json:"resource,omitempty"`
	Nonce       string    `json:"nonce,omitempty"`
	KeyID       string    `json:"key_id,omitempty"`  // the API key signed in with ("" for a session)
	UserID      string    `json:"user_id,omitempty"` // the console user signed in with ("" for an API key)
	AuthTime    time.Time `json:"auth_time"`
	ExpiresAt   time.Time `json:"expires_at"`
	Used        bool      `json:"used,omitempty"`
	Family      string    `json:"family,omitempty"` // the grant it was redeemed into
}

// OAuthGrant is a token family: what one authorization code granted.
type OAuthGrant struct {
	Family    string    `json:"family"`
	ClientID  string    `json:"client_id"`
	OrgID     string    `json:"org_id"`
	Scopes    []string  `json:"scopes"`
	Resource  string    `json:"resource,omitempty"`
	KeyID     string    `json:"key_id,omitempty"`  // the API key signed in with: its revocation revokes the grant
	UserID    string    `json:"user_id,omitempty"` // the console user signed in with: their role bounds the scopes
	AuthTime  time.Time `json:"auth_time"`
	ExpiresAt time.Time `json:"expires_at"` // the latest expiry of its tokens
}

// OAuthToken is an access or refresh token, stored by its hash. A used
// refresh token is kept until it expires so that its reuse is detected.
type OAuthToken struct {
	Hash      string    `json:"hash"`
	Kind      string    `json:"kind"`
	Family    string    `json:"family"`
	ExpiresAt time.Time `json:"expires_at"`
	Used      bool      `json:"used,omitempty"`
	// Scopes narrows an access token issued by a refresh that asked for
	// fewer scopes than its grant holds (RFC 6749 §6); nil is the grant's.
	Scopes []string `json:"scopes,omitempty"`
}

// NewOAuthToken is a token to issue.
type NewOAuthToken struct {
	Hash      string    `json:"hash"`
	ExpiresAt time.Time `json:"expires_at"`
}

// OAuthIssued is the result of a code redemption or a refresh.
type OAuthIssued struct {
	Grant   OAuthGrant
	Nonce   string // of the redeemed code
	Refresh bool   // the refresh token was issued
}

// OAuthSetKey records the signing key. The first one wins; a later one
// returns the recorded key. Result: OAuthKey.
type OAuthSetKey struct {
	Key OAuthKey `json:"key"`
}

// OAuthRegisterClient stores a client. Result: OAuthClient, or
// ErrOAuthClientExists, ErrInvalidCommand.
type OAuthRegisterClient struct {
	Client OAuthClient `json:"client"`
	Now    time.Time   `json:"now"`
}

// OAuthIssueCode stores an authorization code. Result: nil, or
// ErrUnknownOAuthClient, ErrInvalidCommand.
type OAuthIssueCode struct {
	Code OAuthCode `json:"code"`
	Now  time.Time `json:"now"`
}

// OAuthRedeemCode exchanges a code for tokens: the code must be live, unused,
// issued to ClientID for RedirectURI, and Challenge (the S256 of the presented
// verifier) must equal its challenge. A second redemption revokes the grant
// the first one made. Refresh is issued only when the code granted
// offline_access. Result: OAuthIssued, or ErrOAuthInvalidGrant.
type OAuthRedeemCode struct {
	CodeHash    string        `json:"code_hash"`
	ClientID    string        `json:"client_id"`
	RedirectURI string        `json:"redirect_uri"`
	Challenge   string        `json:"challenge"`
	Family      string        `json:"family"`
	Access      NewOAuthToken `json:"access"`
	Refresh     NewOAuthToken `json:"refresh"`
	Now         time.Time     `json:"now"`
}

// OAuthRefresh rotates a refresh token: the presented one is marked used and
// a new access and refresh token join its family. Presenting a used refresh
// token revokes the family. Scopes, when set, must be within the grant's.
// Result: OAuthIssued, or ErrOAuthInvalidGrant, ErrOAuthInvalidScope.
type OAuthRefresh struct {
	RefreshHash string        `json:"refresh_hash"`
	ClientID    string        `json:"client_id"`
	Scopes      []string      `json:"scopes,omitempty"`
	Access      NewOAuthToken `json:"access"`
	Refresh     NewOAuthToken `json:"refresh"`
	Now         time.Time     `json:"now"`
}

// OAuthRevoke revokes the family of a token issued to ClientID (RFC 7009);
// an unknown token or another client's token changes nothing.
// Result: OAuthRevoked, OAuthRevokeUnknown or OAuthRevokeForeign.
type OAuthRevoke struct {
	TokenHash string    `json:"token_hash"`
	ClientID  string    `json:"client_id"`
	Now       time.Time `json:"now"`
}

// Outcomes of an OAuthRevoke. RFC 7009 answers an unknown token as a
// revoked one, and refuses the request of a client the token was not
// issued to.
const (
	OAuthRevoked       = "revoked"      // the token's family is revoked
	OAuthRevokeUnknown = "unknown"      // no such live token: nothing to revoke
	OAuthRevokeForeign = "other_client" // issued to another client: left alone
)

// EncodeOAuthSetKey encodes an OAuthSetKey command.
func EncodeOAuthSetKey(c OAuthSetKey) []byte { return encodeCommand(cmdOAuthSetKey, c) }

// EncodeOAuthRegisterClient encodes an OAuthRegisterClient command.
func EncodeOAuthRegisterClient(c OAuthRegisterClient) []byte {
	return encodeCommand(cmdOAuthRegisterClient, c)
}

// EncodeOAuthIssueCode encodes an OAuthIssueCode command.
func EncodeOAuthIssueCode(c OAuthIssueCode) []byte { return encodeCommand(cmdOAuthIssueCode, c) }

// EncodeOAuthRedeemCode encodes an OAuthRedeemCode command.
func EncodeOAuthRedeemCode(c OAuthRedeemCode) []byte { return encodeCommand(cmdOAuthRedeemCode, c) }

// EncodeOAuthRefresh encodes an OAuthRefresh command.
func EncodeOAuthRefresh(c OAuthRefresh) []byte { return encodeCommand(cmdOAuthRefresh, c) }

// EncodeOAuthRevoke encodes an OAuthRevoke command.
func EncodeOAuthRevoke(c OAuthRevoke) []byte { return encodeCommand(cmdOAuthRevoke, c) }

// oauthState is the OAuth part of metaState. Nil maps are empty.
type oauthState struct {
	key     *OAuthKey
	clients map[string]OAuthClient // by client ID
	codes   map[string]OAuthCode   // by code hash
	grants  map[string]OAuthGrant  // by family
	tokens  map[string]OAuthToken  // by token hash
	sweptAt time.Time
}

func (o *oauthState) init() {
	if o.clients == nil {
		o.clients = map[string]OAuthClient{}
		o.codes = map[string]OAuthCode{}
		o.grants = map[string]OAuthGrant{}
		o.tokens = map[string]OAuthToken{}
	}
}

func invalidGrant(msg string) error {
	return fmt.Errorf("%s: %w", msg, ErrOAuthInvalidGrant)
}

func (st *metaState) oauthSetKey(c OAuthSetKey) any {
	if st.oauth.key != nil {
		return cloneKey(*st.oauth.key)
	}
	if c.Key.KID == "" || len(c.Key.PrivateKey) == 0 {
		return fmt.Errorf("cannot set oauth key: kid and key required: %w", ErrInvalidCommand)
	}
	k := cloneKey(c.Key)
	k.CreatedAt = k.CreatedAt.UTC()
	st.oauth.key = &k
	return cloneKey(k)
}

func (st *metaState) oauthRegisterClient(c OAuthRegisterClient) any {
	o := &st.oauth
	o.init()
	o.sweep(c.Now)
	if c.Client.ClientID == "" || len(c.Client.RedirectURIs) == 0 {
		return fmt.Errorf("cannot register oauth client: id and redirect uris required: %w", ErrInvalidCommand)
	}
	if _, ok := o.clients[c.Client.ClientID]; ok {
		return fmt.Errorf("cannot register oauth client %s: %w", c.Client.ClientID, ErrOAuthClientExists)
	}
	cl := cloneClient(c.Client)
	cl.CreatedAt = cl.CreatedAt.UTC()
	o.clients[cl.ClientID] = cl
	return cloneClient(cl)
}

func (st *metaState) oauthIssueCode(c OAuthIssueCode) any {
	o := &st.oauth
	o.init()
	o.sweep(c.Now)
	cl, ok := o.clients[c.Code.ClientID]
	if !ok {
		return fmt.Errorf("cannot issue code to client %q: %w", c.Code.ClientID, ErrUnknownOAuthClient)
	}
	if _, dup := o.codes[c.Code.Hash]; dup || c.Code.Hash == "" || c.Code.OrgID == "" {
		return fmt.Errorf("cannot issue code: empty or duplicate hash, or no org: %w", ErrInvalidCommand)
	}
	code := c.Code
	code.Scopes = slices.Clone(code.Scopes)
	code.Used, code.Family = false, ""
	o.codes[code.Hash] = code
	cl.LastUsedAt = c.Now.UTC()
	o.clients[cl.ClientID] = cl
	return nil
}

func (st *metaState) oauthRedeemCode(c OAuthRedeemCode) any {
	o := &st.oauth
	o.init()
	o.sweep(c.Now)
	code, ok := o.codes[c.CodeHash]
	switch {
	case !ok || !code.ExpiresAt.After(c.Now):
		return invalidGrant("authorization code is unknown or expired")
	case code.ClientID != c.ClientID:
		return invalidGrant("authorization code was issued to another client")
	case code.Used:
		o.revokeFamily(code.Family)
		return invalidGrant("authorization code was already used; the tokens it granted are revoked")
	case code.KeyID != "" && st.keys[code.KeyID].info.Revoked:
		return invalidGrant("the API key signed in with was revoked")
	case st.memberGone(code.UserID, code.OrgID):
		return invalidGrant("the person who signed in is no longer a member of the workspace")
	case code.RedirectURI != c.RedirectURI:
		return invalidGrant("redirect_uri does not match the authorization request")
	case code.Challenge != c.Challenge:
		return invalidGrant("code_verifier does not match the code_challenge")
	case c.Family == "" || c.Access.Hash == "" || o.grants[c.Family].Family != "":
		return fmt.Errorf("cannot redeem code: bad family or token: %w", ErrInvalidCommand)
	}
	code.Used, code.Family = true, c.Family
	o.codes[code.Hash] = code
	g := OAuthGrant{Family: c.Family, ClientID: code.ClientID, OrgID: code.OrgID, Scopes: slices.Clone(code.Scopes),
		Resource: code.Resource, KeyID: code.KeyID, UserID: code.UserID, AuthTime: code.AuthTime}
	refresh := slices.Contains(code.Scopes, ScopeOfflineAccess) && c.Refresh.Hash != ""
	g = o.issue(g, c.Access, c.Refresh, refresh)
	return OAuthIssued{Grant: cloneGrant(g), Nonce: code.Nonce, Refresh: refresh}
}

func (st *metaState) oauthRefresh(c OAuthRefresh) any {
	o := &st.oauth
	o.init()
	o.sweep(c.Now)
	tok, ok := o.tokens[c.RefreshHash]
	g, live := o.grants[tok.Family]
	switch {
	case !ok || tok.Kind != OAuthRefreshToken || !tok.ExpiresAt.After(c.Now) || !live:
		return invalidGrant("refresh token is unknown, expired or revoked")
	case g.ClientID != c.ClientID:
		return invalidGrant("refresh token was issued to another client")
	case tok.Used:
		o.revokeFamily(tok.Family)
		return invalidGrant("refresh token was already used; its grant is revoked")
	case st.memberGone(g.UserID, g.OrgID):
		o.revokeFamily(tok.Family)
		return invalidGrant("the person who signed in is no longer a member of the workspace")
	case c.Access.Hash == "" || c.Refresh.Hash == "":
		return fmt.Errorf("cannot refresh: token hashes required: %w", ErrInvalidCommand)
	}
	for _, sc := range c.Scopes {
		if !slices.Contains(g.Scopes, sc) {
			return fmt.Errorf("scope %s was not granted: %w", sc, ErrOAuthInvalidScope)
		}
	}
	tok.Used = true
	o.tokens[tok.Hash] = tok
	g = o.issue(g, c.Access, c.Refresh, true)
	if cl, ok := o.clients[g.ClientID]; ok {
		cl.LastUsedAt = c.Now.UTC()
		o.clients[cl.ClientID] = cl
	}
	issued := cloneGrant(g)
	if narrow := narrowed(g.Scopes, c.Scopes); narrow != nil {
		at := o.tokens[c.Access.Hash]
		at.Scopes = narrow
		o.tokens[at.Hash] = at
		issued.Scopes = slices.Clone(narrow)
	}
	return OAuthIssued{Grant: issued, Refresh: true}
}

// narrowed returns the granted scopes a refresh asked for, in the grant's
// order, when it asked for fewer than granted; nil when it asked for none
// (the grant's scopes) or for all of them.
func narrowed(granted, asked []string) []string {
	if len(asked) == 0 {
		return nil
	}
	var out []string
	for _, sc := range granted {
		if slices.Contains(asked, sc) {
			out = append(out, sc)
		}
	}
	if len(out) == len(granted) {
		return nil
	}
	return out
}

// issue adds an access token (and a refresh token when refresh is set) to
// grant g and stores it.
func (o *oauthState) issue(g OAuthGrant, access, refresh NewOAuthToken, withRefresh bool) OAuthGrant {
	add := func(t NewOAuthToken, kind string) {
		o.tokens[t.Hash] = OAuthToken{Hash: t.Hash, Kind: kind, Family: g.Family, ExpiresAt: t.ExpiresAt.UTC()}
		if t.ExpiresAt.After(g.ExpiresAt) {
			g.ExpiresAt = t.ExpiresAt.UTC()
		}
	}
	add(access, OAuthAccessToken)
	if withRefresh {
		add(refresh, OAuthRefreshToken)
	}
	o.grants[g.Family] = g
	return g
}

func (st *metaState) oauthRevoke(c OAuthRevoke) any {
	o := &st.oauth
	o.init()
	o.sweep(c.Now)
	tok, ok := o.tokens[c.TokenHash]
	switch {
	case !ok:
		return OAuthRevokeUnknown
	case o.grants[tok.Family].ClientID != c.ClientID:
		return OAuthRevokeForeign
	}
	o.revokeFamily(tok.Family)
	return OAuthRevoked
}

// revokeFamily deletes a grant and every token of it.
func (o *oauthState) revokeFamily(family string) {
	if family == "" {
		return
	}
	delete(o.grants, family)
	maps.DeleteFunc(o.tokens, func(_ string, t OAuthToken) bool { return t.Family == family })
}

// revokeKeyGrants revokes every grant made by signing in with keyID.
func (o *oauthState) revokeKeyGrants(keyID string) {
	for family, g := range o.grants {
		if g.KeyID == keyID {
			o.revokeFamily(family)
		}
	}
}

// revokeUserGrants revokes every grant, and drops every code not yet
// redeemed, that a console user signed in to org for.
func (o *oauthState) revokeUserGrants(userID, org string) {
	o.init()
	for family, g := range o.grants {
		if g.UserID == userID && g.OrgID == org {
			o.revokeFamily(family)
		}
	}
	maps.DeleteFunc(o.codes, func(_ string, c OAuthCode) bool {
		return c.UserID == userID && c.OrgID == org && !c.Used
	})
}

// memberGone reports whether the console user a grant or code was signed in
// for (userID, "" for an API key) is no longer a member of org.
func (st *metaState) memberGone(userID, org string) bool {
	if userID == "" {
		return false
	}
	u, ok := st.console.users[userID]
	return !ok || !slices.ContainsFunc(u.Orgs, func(m ConsoleMembership) bool { return m.OrgID == org })
}

// sweep deletes expired records, at most once per oauthSweepEvery of command
// time. Which records go depends only on the state and now.
func (o *oauthState) sweep(now time.Time) {
	if now.Before(o.sweptAt.Add(oauthSweepEvery)) {
		return
	}
	o.sweptAt = now.UTC()
	expired := func(at time.Time) bool { return !at.After(now) }
	maps.DeleteFunc(o.codes, func(_ string, c OAuthCode) bool { return expired(c.ExpiresAt) })
	maps.DeleteFunc(o.tokens, func(_ string, t OAuthToken) bool { return expired(t.ExpiresAt) })
	maps.DeleteFunc(o.grants, func(_ string, g OAuthGrant) bool { return expired(g.ExpiresAt) })
	maps.DeleteFunc(o.clients, func(_ string, c OAuthClient) bool {
		if c.LastUsedAt.IsZero() {
			return expired(c.CreatedAt.Add(oauthUnusedClientTTL))
		}
		return expired(c.LastUsedAt.Add(oauthIdleClientTTL))
	})
}

// OAuthKey returns the signing key; false until one is set.
func (m *Meta) OAuthKey() (OAuthKey, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.st.oauth.key == nil {
		return OAuthKey{}, false
	}
	return cloneKey(*m.st.oauth.key), true
}

// OAuthClient returns a registered client.
func (m *Meta) OAuthClient(id string) (OAuthClient, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	c, ok := m.st.oauth.clients[id]
	return cloneClient(c), ok
}

// OAuthAccess resolves the hash of an access token to its grant: false when
// the token is unknown, not an access token, expired at now, or revoked.
func (m *Meta) OAuthAccess(hash string, now time.Time) (OAuthGrant, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.st.oauth.tokens[hash]
	if !ok || t.Kind != OAuthAccessToken || !t.ExpiresAt.After(now) {
		return OAuthGrant{}, false
	}
	g, ok := m.st.oauth.grants[t.Family]
	if !ok {
		return OAuthGrant{}, false
	}
	g = cloneGrant(g)
	g.ExpiresAt = t.ExpiresAt
	if t.Scopes != nil {
		g.Scopes = slices.Clone(t.Scopes)
	}
	return g, true
}

func cloneKey(k OAuthKey) OAuthKey { k.PrivateKey = slices.Clone(k.PrivateKey); return k }

func cloneClient(c OAuthClient) OAuthClient {
	c.RedirectURIs, c.GrantTypes = slices.Clone(c.RedirectURIs), slices.Clone(c.GrantTypes)
	return c
}

func cloneGrant(g OAuthGrant) OAuthGrant { g.Scopes = slices.Clone(g.Scopes); return g }

func cloneCode(c OAuthCode) OAuthCode { c.Scopes = slices.Clone(c.Scopes); return c }

// snapOAuthV1 is the OAuth part of a version 1 snapshot; every list sorted
// by its key. It is omitted while the OAuth state is empty, so snapshots of
// deployments that never used OAuth are unchanged.
type snapOAuthV1 struct {
	Key     *OAuthKey     `json:"key,omitempty"`
	Clients []OAuthClient `json:"clients,omitempty"`
	Codes   []OAuthCode   `json:"codes,omitempty"`
	Grants  []OAuthGrant  `json:"grants,omitempty"`
	Tokens  []OAuthToken  `json:"tokens,omitempty"`
	SweptAt time.Time     `json:"swept_at,omitzero"`
}

func (o *oauthState) snapshot() *snapOAuthV1 {
	if o.key == nil && len(o.clients) == 0 && len(o.codes) == 0 && len(o.tokens) == 0 && o.sweptAt.IsZero() {
		return nil
	}
	s := &snapOAuthV1{SweptAt: o.sweptAt}
	if o.key != nil {
		k := cloneKey(*o.key)
		s.Key = &k
	}
	s.Clients = sortedValues(o.clients, cloneClient, func(c OAuthClient) string { return c.ClientID })
	s.Codes = sortedValues(o.codes, cloneCode, func(c OAuthCode) string { return c.Hash })
	s.Grants = sortedValues(o.grants, cloneGrant, func(g OAuthGrant) string { return g.Family })
	s.Tokens = sortedValues(o.tokens, func(t OAuthToken) OAuthToken { return t }, func(t OAuthToken) string { return t.Hash })
	return s
}

func sortedValues[V any](m map[string]V, clone func(V) V, key func(V) string) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, clone(v))
	}
	slices.SortFunc(out, func(a, b V) int { return cmp.Compare(key(a), key(b)) })
	return out
}

// restoreOAuthV1 rebuilds the OAuth state of a snapshot (nil: empty).
func restoreOAuthV1(s *snapOAuthV1) (oauthState, error) {
	var o oauthState
	if s == nil {
		return o, nil
	}
	o.init()
	o.sweptAt = s.SweptAt
	if s.Key != nil {
		k := cloneKey(*s.Key)
		o.key = &k
	}
	if err := fill(o.clients, s.Clients, cloneClient, func(c OAuthClient) string { return c.ClientID }); err != nil {
		return o, err
	}
	if err := fill(o.codes, s.Codes, cloneCode, func(c OAuthCode) string { return c.Hash }); err != nil {
		return o, err
	}
	if err := fill(o.grants, s.Grants, cloneGrant, func(g OAuthGrant) string { return g.Family }); err != nil {
		return o, err
	}
	return o, fill(o.tokens, s.Tokens, func(t OAuthToken) OAuthToken { return t }, func(t OAuthToken) string { return t.Hash })
}

func fill[V any](m map[string]V, list []V, clone func(V) V, key func(V) string) error {
	for _, v := range list {
		k := key(v)
		if k == "" {
			return fmt.Errorf("%w: oauth record without id", ErrCorruptSnapshot)
		}
		if _, dup := m[k]; dup {
			return fmt.Errorf("%w: duplicate oauth record %s", ErrCorruptSnapshot, k)
		}
		m[k] = clone(v)
	}
	return nil
}
