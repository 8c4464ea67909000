package oauth

import (
	"bytes"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router/vault"
)

func ring(t *testing.T, b byte) *vault.Ring {
	t.Helper()
	r, err := vault.Parse(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// jwksOf serves GET /oauth/jwks from a server on b with keys.
func jwksOf(t *testing.T, b *fakeBackend, keys *vault.Ring) (int, string) {
	t.Helper()
	srv := New(Config{Issuer: "http://x", Keys: keys, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, b)
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/oauth/jwks", nil))
	return rec.Code, rec.Body.String()
}

// With a key ring the signing key enters the meta log sealed; the same
// ring reads it back (a restart, another node), another ring cannot.
func TestSigningKeySealed(t *testing.T) {
	b := &fakeBackend{m: cluster.NewMeta()}
	code, first := jwksOf(t, b, ring(t, 1))
	if code != http.StatusOK {
		t.Fatalf("jwks: %d %s", code, first)
	}
	k, ok := b.Meta().OAuthKey()
	if !ok {
		t.Fatal("no key recorded")
	}
	if !bytes.HasPrefix(k.PrivateKey, []byte("hebb-sealed-key-v1")) {
		t.Fatalf("the recorded key is not sealed: %x...", k.PrivateKey[:16])
	}
	if code, again := jwksOf(t, b, ring(t, 1)); code != http.StatusOK || again != first {
		t.Fatalf("the same ring reads another key: %d %s, want %s", code, again, first)
	}
	if code, _ := jwksOf(t, b, ring(t, 2)); code != http.StatusServiceUnavailable {
		t.Fatalf("another ring: %d, want 503", code)
	}
}

// A key recorded in clear (before keys were sealed) still signs.
func TestClearSigningKeyStillReads(t *testing.T) {
	b := &fakeBackend{m: cluster.NewMeta()}
	code, first := jwksOf(t, b, nil)
	if k, _ := b.Meta().OAuthKey(); code != http.StatusOK || bytes.HasPrefix(k.PrivateKey, []byte("hebb-sealed")) {
		t.Fatalf("without a ring: %d, key sealed %v", code, bytes.HasPrefix(k.PrivateKey, []byte("hebb-sealed")))
	}
	if code, again := jwksOf(t, b, ring(t, 1)); code != http.StatusOK || again != first {
		t.Fatalf("with a ring: %d %s, want %s", code, again, first)
	}
}
