package chat_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

const (
	fakeClientID     = "chat-client"
	fakeClientSecret = "chat-secret"
)

// fakeIdP is a minimal OpenID Connect provider: discovery, an authorize
// endpoint that signs in whoever nextUser named (no login page), a token
// endpoint checking client secret, redirect URI and PKCE, and a JWKS.
type fakeIdP struct {
	t     *testing.T
	srv   *httptest.Server
	key   *rsa.PrivateKey
	mu    sync.Mutex
	user  [2]string // sub, name of the next sign-in
	codes map[string]fakeCode
}

type fakeCode struct {
	sub, name, nonce, challenge, redirect string
}

var b64 = base64.RawURLEncoding

// fakeKey is generated once: RSA key generation is slow under -race.
var fakeKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

func newFakeIdP(t *testing.T) *fakeIdP {
	p := &fakeIdP{t: t, key: fakeKey(), codes: map[string]fakeCode{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	mux.HandleFunc("GET /jwks", p.jwks)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *fakeIdP) URL() string { return p.srv.URL }

func (p *fakeIdP) nextUser(sub, name string) {
	p.mu.Lock()
	p.user = [2]string{sub, name}
	p.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (p *fakeIdP) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, 200, map[string]any{"issuer": p.srv.URL, "authorization_endpoint": p.srv.URL + "/authorize",
		"token_endpoint": p.srv.URL + "/token", "jwks_uri": p.srv.URL + "/jwks",
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic"},
		"id_token_signing_alg_values_supported": []string{"RS256"}})
}

func (p *fakeIdP) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != fakeClientID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" ||
		q.Get("scope") != "openid profile email" || q.Get("nonce") == "" {
		http.Error(w, "bad authorization request", 400)
		return
	}
	p.mu.Lock()
	code := fmt.Sprintf("code-%d", len(p.codes)+1)
	p.codes[code] = fakeCode{sub: p.user[0], name: p.user[1], nonce: q.Get("nonce"),
		challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
	p.mu.Unlock()
	back, _ := url.Parse(q.Get("redirect_uri"))
	back.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (p *fakeIdP) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok || id != fakeClientID || secret != fakeClientSecret {
		writeJSON(w, 401, map[string]string{"error": "invalid_client"})
		return
	}
	_ = r.ParseForm()
	p.mu.Lock()
	c, found := p.codes[r.Form.Get("code")]
	delete(p.codes, r.Form.Get("code"))
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
	if !found || r.Form.Get("grant_type") != "authorization_code" || c.redirect != r.Form.Get("redirect_uri") ||
		b64.EncodeToString(sum[:]) != c.challenge {
		writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
		return
	}
	now := time.Now().Unix()
	idToken := p.sign(map[string]any{"iss": p.srv.URL, "sub": c.sub, "aud": fakeClientID, "exp": now + 300,
		"iat": now, "nonce": c.nonce, "name": c.name, "email": c.sub + "@example.com", "email_verified": true})
	writeJSON(w, 200, map[string]any{"access_token": "at-" + c.sub, "token_type": "Bearer", "id_token": idToken})
}

// sign makes an RS256 JWT with kid "k1".
func (p *fakeIdP) sign(claims map[string]any) string {
	head, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": "k1", "typ": "JWT"})
	body, _ := json.Marshal(claims)
	input := b64.EncodeToString(head) + "." + b64.EncodeToString(body)
	digest := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, p.key, crypto.SHA256, digest[:])
	if err != nil {
		p.t.Fatal(err)
	}
	return input + "." + b64.EncodeToString(sig)
}

func (p *fakeIdP) jwks(w http.ResponseWriter, _ *http.Request) {
	pub := p.key.PublicKey
	writeJSON(w, 200, map[string]any{"keys": []map[string]string{{"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
		"n": b64.EncodeToString(pub.N.Bytes()), "e": b64.EncodeToString(big.NewInt(int64(pub.E)).Bytes())}}})
}
