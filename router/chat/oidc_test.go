package chat

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// jwksServer serves one EC P-256 key as kid "ec1".
func jwksServer(t *testing.T, key *ecdsa.PrivateKey) *httptest.Server {
	size := 32
	pad := func(b []byte) []byte { out := make([]byte, size); copy(out[size-len(b):], b); return out }
	pub, _ := key.PublicKey.Bytes() // 0x04 || X || Y
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{"kty": "EC", "kid": "ec1", "crv": "P-256",
			"x": b64.EncodeToString(pad(pub[1 : 1+size])), "y": b64.EncodeToString(pad(pub[1+size:]))}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func signES256(t *testing.T, key *ecdsa.PrivateKey, head, claims map[string]any) string {
	h, _ := json.Marshal(head)
	c, _ := json.Marshal(claims)
	input := b64.EncodeToString(h) + "." + b64.EncodeToString(c)
	digest := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + b64.EncodeToString(sig)
}

func TestVerifyIDToken(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srv := jwksServer(t, key)
	p := newProvider(OIDC{Issuer: "https://idp.example", ClientID: "client"}, srv.Client())
	d := &discovery{Issuer: "https://idp.example", JWKSURI: srv.URL}
	now := time.Unix(1_800_000_000, 0)
	claims := func(mod func(map[string]any)) map[string]any {
		c := map[string]any{"iss": "https://idp.example", "sub": "u1", "aud": []string{"client"}, "exp": now.Unix() + 60,
			"iat": now.Unix(), "nonce": "n1", "name": "Ursula"}
		if mod != nil {
			mod(c)
		}
		return c
	}
	head := map[string]any{"alg": "ES256", "kid": "ec1"}
	cases := []struct {
		name  string
		token string
		ok    bool
	}{
		{"valid", signES256(t, key, head, claims(nil)), true},
		{"audience string", signES256(t, key, head, claims(func(c map[string]any) { c["aud"] = "client" })), true},
		{"other audience", signES256(t, key, head, claims(func(c map[string]any) { c["aud"] = "intruder" })), false},
		{"other issuer", signES256(t, key, head, claims(func(c map[string]any) { c["iss"] = "https://evil" })), false},
		{"expired", signES256(t, key, head, claims(func(c map[string]any) { c["exp"] = now.Unix() - 120 })), false},
		{"future", signES256(t, key, head, claims(func(c map[string]any) { c["iat"] = now.Unix() + 600 })), false},
		{"nonce", signES256(t, key, head, claims(func(c map[string]any) { c["nonce"] = "n2" })), false},
		{"no subject", signES256(t, key, head, claims(func(c map[string]any) { delete(c, "sub") })), false},
		{"wrong key", signES256(t, other, head, claims(nil)), false},
		{"alg none", signES256(t, key, map[string]any{"alg": "none", "kid": "ec1"}, claims(nil)), false},
		{"alg mismatch", signES256(t, key, map[string]any{"alg": "RS256", "kid": "ec1"}, claims(nil)), false},
		{"unknown kid", signES256(t, key, map[string]any{"alg": "ES256", "kid": "nope"}, claims(nil)), false},
		{"garbage", "a.b", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, err := p.verifyIDToken(context.Background(), d, tc.token, "n1", now)
			if tc.ok != (err == nil) {
				t.Fatalf("err %v", err)
			}
			if err != nil && !errors.Is(err, ErrProvider) {
				t.Fatalf("error %v does not wrap ErrProvider", err)
			}
			if tc.ok && (id.Subject != "u1" || id.Name != "Ursula" || id.Issuer != "https://idp.example") {
				t.Fatalf("identity %+v", id)
			}
		})
	}
}

func TestVerifyJWSRefusesMismatchedKeys(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err := verifyJWS("HS256", &key.PublicKey, "x", nil); err == nil {
		t.Fatal("HS256 accepted")
	}
	if err := verifyJWS("ES256", crypto.PublicKey("not a key"), "x", nil); err == nil {
		t.Fatal("a non-key accepted")
	}
}

func TestDisplayName(t *testing.T) {
	f := func(id identity, want string) {
		t.Helper()
		if got := displayName(id); got != want {
			t.Fatalf("displayName(%+v) = %q, want %q", id, got, want)
		}
	}
	f(identity{Name: "  Ada  "}, "Ada")
	f(identity{Email: "grace@example.com"}, "grace")
	f(identity{}, "User")
	long := ""
	for range 70 {
		long += "é"
	}
	f(identity{Name: long}, long[:64*2])
}

func TestValidID(t *testing.T) {
	f := func(prefix, s string, want bool) {
		t.Helper()
		if validID(prefix, s) != want {
			t.Fatalf("validID(%q, %q) != %v", prefix, s, want)
		}
	}
	f(roomPrefix, "chat_01ARZ3NDEKTSV4RRFFQ69G5FAV", true)
	f(roomPrefix, "chat_01arz3ndektsv4rrffq69g5fav", false)
	f(roomPrefix, "room_01ARZ3NDEKTSV4RRFFQ69G5FAV", false)
	f(roomPrefix, "chat_01ARZ3NDEKTSV4RRFFQ69G5FA", false)
	f(userPrefix, "usr_8ZZZZZZZZZZZZZZZZZZZZZZZZZ", false) // overflows a ULID
}
