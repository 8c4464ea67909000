package chat

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// provider is an OpenID Connect relying party of one issuer: discovery,
// the authorization URL (code flow with PKCE S256), the token exchange and
// id_token verification against the issuer's JWKS.
type provider struct {
	cfg    OIDC
	hc     *http.Client
	mu     sync.Mutex
	disc   *discovery
	keys   map[string]crypto.PublicKey // by kid
	keysAt time.Time
}

type discovery struct {
	Issuer           string   `json:"issuer"`
	AuthEndpoint     string   `json:"authorization_endpoint"`
	TokenEndpoint    string   `json:"token_endpoint"`
	JWKSURI          string   `json:"jwks_uri"`
	UserinfoEndpoint string   `json:"userinfo_endpoint"`
	AuthMethods      []string `json:"token_endpoint_auth_methods_supported"`
}

// identity is who the provider says signed in.
type identity struct {
	Issuer, Subject, Name, Email, Picture string
	EmailVerified                         bool
}

const (
	jwksRefetchEvery = 30 * time.Second
	clockSkew        = time.Minute
	maxProviderBody  = 1 << 20
)

func newProvider(cfg OIDC, hc *http.Client) *provider {
	cfg.Issuer = strings.TrimRight(cfg.Issuer, "/")
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = []string{"openid", "profile", "email"}
	}
	return &provider{cfg: cfg, hc: hc}
}

func (p *provider) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrProvider, err)
	}
	req.Header.Set("Accept", "application/json")
	return p.do(req, v)
}

func (p *provider) do(req *http.Request, v any) error {
	resp, err := p.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrProvider, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProviderBody))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrProvider, err)
	}
	if resp.StatusCode != http.StatusOK {
		var refusal struct {
			Error string `json:"error"`
		}
		if resp.StatusCode == http.StatusBadRequest && json.Unmarshal(body, &refusal) == nil && refusal.Error == "invalid_grant" {
			return errCodeRefused
		}
		return fmt.Errorf("%w: %s answered %d: %.200s", ErrProvider, req.URL.Redacted(), resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrProvider, req.URL.Redacted(), err)
	}
	return nil
}

// discover fetches (once) the issuer's OpenID configuration.
func (p *provider) discover(ctx context.Context) (*discovery, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.disc != nil {
		return p.disc, nil
	}
	var d discovery
	if err := p.getJSON(ctx, p.cfg.Issuer+"/.well-known/openid-configuration", &d); err != nil {
		return nil, err
	}
	if strings.TrimRight(d.Issuer, "/") != p.cfg.Issuer || d.AuthEndpoint == "" || d.TokenEndpoint == "" || d.JWKSURI == "" {
		return nil, fmt.Errorf("%w: discovery document of %s is incomplete or names issuer %q", ErrProvider, p.cfg.Issuer, d.Issuer)
	}
	p.disc = &d
	return p.disc, nil
}

// authURL is where the browser goes to sign in.
func (p *provider) authURL(ctx context.Context, redirectURI, state, nonce, challenge string) (string, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return "", err
	}
	q := url.Values{"response_type": {"code"}, "client_id": {p.cfg.ClientID}, "redirect_uri": {redirectURI},
		"scope": {strings.Join(p.cfg.Scopes, " ")}, "state": {state}, "nonce": {nonce},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}}
	sep := "?"
	if strings.Contains(d.AuthEndpoint, "?") {
		sep = "&"
	}
	return d.AuthEndpoint + sep + q.Encode(), nil
}

type tokenResponse struct {
	IDToken     string `json:"id_token"`
	AccessToken string `json:"access_token"`
}

// exchange redeems an authorization code and returns the verified identity.
func (p *provider) exchange(ctx context.Context, code, verifier, redirectURI, nonce string) (identity, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return identity{}, err
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
		"code_verifier": {verifier}}
	postSecret := p.cfg.ClientSecret != "" && len(d.AuthMethods) > 0 &&
		!slices.Contains(d.AuthMethods, "client_secret_basic") && slices.Contains(d.AuthMethods, "client_secret_post")
	if p.cfg.ClientSecret == "" || postSecret {
		form.Set("client_id", p.cfg.ClientID)
	}
	if postSecret {
		form.Set("client_secret", p.cfg.ClientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return identity{}, fmt.Errorf("%w: %w", ErrProvider, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if p.cfg.ClientSecret != "" && !postSecret {
		req.SetBasicAuth(url.QueryEscape(p.cfg.ClientID), url.QueryEscape(p.cfg.ClientSecret))
	}
	var tr tokenResponse
	if err := p.do(req, &tr); err != nil {
		return identity{}, err
	}
	if tr.IDToken == "" {
		return identity{}, fmt.Errorf("%w: the token response has no id_token", ErrProvider)
	}
	id, err := p.verifyIDToken(ctx, d, tr.IDToken, nonce, time.Now())
	if err != nil {
		return identity{}, err
	}
	if (id.Name == "" || id.Email == "") && d.UserinfoEndpoint != "" && tr.AccessToken != "" {
		p.userinfo(ctx, d, tr.AccessToken, &id)
	}
	return id, nil
}

// userinfo fills missing profile fields; a failure leaves them empty.
func (p *provider) userinfo(ctx context.Context, d *discovery, access string, id *identity) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.UserinfoEndpoint, nil)
	if err != nil {
		return
	}
	req.Header.Set("Authorization", "Bearer "+access)
	var c idClaims
	if p.do(req, &c) != nil || c.Sub != id.Subject {
		return
	}
	id.Name, id.Email, id.Picture = cmpOr(id.Name, c.Name), cmpOr(id.Email, c.Email), cmpOr(id.Picture, c.Picture)
	id.EmailVerified = id.EmailVerified || c.EmailVerified
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

type idClaims struct {
	Iss           string          `json:"iss"`
	Sub           string          `json:"sub"`
	Aud           json.RawMessage `json:"aud"`
	Azp           string          `json:"azp"`
	Exp           float64         `json:"exp"`
	Iat           float64         `json:"iat"`
	Nonce         string          `json:"nonce"`
	Name          string          `json:"name"`
	Email         string          `json:"email"`
	EmailVerified bool            `json:"email_verified"`
	Picture       string          `json:"picture"`
}

func (c *idClaims) audiences() []string {
	var one string
	if json.Unmarshal(c.Aud, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(c.Aud, &many)
	return many
}

// verifyIDToken checks the signature (JWKS), issuer, audience, expiry and
// nonce of an id_token.
func (p *provider) verifyIDToken(ctx context.Context, d *discovery, raw, nonce string, now time.Time) (identity, error) {
	bad := func(why string) (identity, error) {
		return identity{}, fmt.Errorf("%w: id_token %s", ErrProvider, why)
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return bad("is not a JWS")
	}
	var head struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	var c idClaims
	hb, err1 := b64.DecodeString(parts[0])
	pb, err2 := b64.DecodeString(parts[1])
	sig, err3 := b64.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || json.Unmarshal(hb, &head) != nil || json.Unmarshal(pb, &c) != nil {
		return bad("is malformed")
	}
	key, err := p.key(ctx, d, head.Kid)
	if err != nil {
		return identity{}, err
	}
	if err := verifyJWS(head.Alg, key, parts[0]+"."+parts[1], sig); err != nil {
		return bad(err.Error())
	}
	auds := c.audiences()
	switch {
	case strings.TrimRight(c.Iss, "/") != strings.TrimRight(d.Issuer, "/"):
		return bad("has another issuer")
	case !slices.Contains(auds, p.cfg.ClientID) || (len(auds) > 1 && c.Azp != "" && c.Azp != p.cfg.ClientID):
		return bad("is not for this client")
	case float64(now.Add(-clockSkew).Unix()) >= c.Exp:
		return bad("has expired")
	case c.Iat > float64(now.Add(clockSkew).Unix()):
		return bad("is issued in the future")
	case c.Nonce != nonce:
		return bad("nonce does not match")
	case c.Sub == "":
		return bad("has no subject")
	}
	return identity{Issuer: strings.TrimRight(d.Issuer, "/"), Subject: c.Sub, Name: c.Name, Email: c.Email,
		EmailVerified: c.EmailVerified, Picture: c.Picture}, nil
}

// key returns the signing key kid, fetching the JWKS when it is unknown
// (at most once per jwksRefetchEvery).
func (p *provider) key(ctx context.Context, d *discovery, kid string) (crypto.PublicKey, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if k := p.pick(kid); k != nil {
		return k, nil
	}
	if time.Since(p.keysAt) < jwksRefetchEvery && p.keys != nil {
		return nil, fmt.Errorf("%w: id_token signed with unknown key %q", ErrProvider, kid)
	}
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := p.getJSON(ctx, d.JWKSURI, &set); err != nil {
		return nil, err
	}
	p.keys, p.keysAt = map[string]crypto.PublicKey{}, time.Now()
	for _, k := range set.Keys {
		if pub := k.public(); pub != nil && (k.Use == "" || k.Use == "sig") {
			p.keys[k.Kid] = pub
		}
	}
	if k := p.pick(kid); k != nil {
		return k, nil
	}
	return nil, fmt.Errorf("%w: id_token signed with unknown key %q", ErrProvider, kid)
}

// pick returns key kid, or the only key when the token names none.
func (p *provider) pick(kid string) crypto.PublicKey {
	if k, ok := p.keys[kid]; ok {
		return k
	}
	if kid == "" && len(p.keys) == 1 {
		for _, k := range p.keys {
			return k
		}
	}
	return nil
}

// jwk is one JSON Web Key (RFC 7517): RSA or EC public keys are used.
type jwk struct {
	Kty, Kid, Use, Crv, N, E, X, Y string
}

func (k jwk) public() crypto.PublicKey {
	switch k.Kty {
	case "RSA":
		n, err1 := b64.DecodeString(k.N)
		e, err2 := b64.DecodeString(k.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return nil
		}
		return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	case "EC":
		curve := map[string]elliptic.Curve{"P-256": elliptic.P256(), "P-384": elliptic.P384(), "P-521": elliptic.P521()}[k.Crv]
		x, err1 := b64.DecodeString(k.X)
		y, err2 := b64.DecodeString(k.Y)
		if curve == nil || err1 != nil || err2 != nil {
			return nil
		}
		size := (curve.Params().BitSize + 7) / 8
		if len(x) > size || len(y) > size {
			return nil
		}
		point := make([]byte, 1+2*size)
		point[0] = 4
		copy(point[1+size-len(x):1+size], x)
		copy(point[1+2*size-len(y):], y)
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, point)
		if err != nil {
			return nil
		}
		return pub
	}
	return nil
}

// verifyJWS checks sig over input for the RS*, PS* and ES* algorithms; the
// key type must match the algorithm ("none" and HS* are refused).
func verifyJWS(alg string, key crypto.PublicKey, input string, sig []byte) error {
	if len(alg) != 5 {
		return fmt.Errorf("uses unsupported algorithm %q", alg)
	}
	h := map[string]crypto.Hash{"256": crypto.SHA256, "384": crypto.SHA384, "512": crypto.SHA512}[alg[2:]]
	if h == 0 {
		return fmt.Errorf("uses unsupported algorithm %q", alg)
	}
	hasher := h.New()
	hasher.Write([]byte(input))
	digest := hasher.Sum(nil)
	bad := fmt.Errorf("signature does not verify (%s)", alg)
	switch pub := key.(type) {
	case *rsa.PublicKey:
		switch alg[:2] {
		case "RS":
			if rsa.VerifyPKCS1v15(pub, h, digest, sig) != nil {
				return bad
			}
			return nil
		case "PS":
			if rsa.VerifyPSS(pub, h, digest, sig, nil) != nil {
				return bad
			}
			return nil
		}
	case *ecdsa.PublicKey:
		size := (pub.Curve.Params().BitSize + 7) / 8
		if alg[:2] != "ES" || len(sig) != 2*size {
			return bad
		}
		r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
		if !ecdsa.Verify(pub, digest, r, s) {
			return bad
		}
		return nil
	}
	return fmt.Errorf("algorithm %q does not match the key", alg)
}
