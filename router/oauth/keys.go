package oauth

import (
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/hebbdb/hebb/cluster"
)

// signer holds the cluster's signing key: RS256 for id_tokens, and an HMAC
// key derived from it for sign-in tickets.
type signer struct {
	kid    string
	key    *rsa.PrivateKey
	ticket []byte
}

// signer returns the cluster's key, making and replicating one on first use
// (the first key any node proposes wins).
func (s *Server) signer(ctx context.Context) (*signer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sig != nil {
		return s.sig, nil
	}
	k, ok := s.backend.Meta().OAuthKey()
	if !ok {
		priv, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, fmt.Errorf("cannot generate the signing key: %w", err)
		}
		der, err := x509.MarshalPKCS8PrivateKey(priv)
		if err != nil {
			return nil, fmt.Errorf("cannot encode the signing key: %w", err)
		}
		kid := newID("k")
		stored, err := s.cfg.Keys.SealKey(der, keyPurpose, kid)
		if err != nil {
			return nil, err
		}
		res, err := s.propose(ctx, cluster.EncodeOAuthSetKey(cluster.OAuthSetKey{
			Key: cluster.OAuthKey{KID: kid, PrivateKey: stored, CreatedAt: time.Now().UTC()}}))
		if err != nil {
			return nil, fmt.Errorf("cannot record the signing key: %w", err)
		}
		k = res.(cluster.OAuthKey)
	}
	der, err := s.cfg.Keys.OpenKey(k.PrivateKey, keyPurpose, k.KID)
	if err != nil {
		return nil, err
	}
	parsed, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("cannot read the signing key: %w", err)
	}
	priv, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("oauth: the signing key is not an RSA key")
	}
	mac := sha256.Sum256(append([]byte("hebb oauth ticket\x00"), der...))
	s.sig = &signer{kid: k.KID, key: priv, ticket: mac[:]}
	return s.sig, nil
}

// keyPurpose names the signing key in its sealing (vault.Ring.SealKey).
const keyPurpose = "oauth signing key"

var b64 = base64.RawURLEncoding

// jwt signs claims as a compact RS256 JWS.
func (g *signer) jwt(claims map[string]any) (string, error) {
	head, err := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": g.kid})
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := b64.EncodeToString(head) + "." + b64.EncodeToString(body)
	sum := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(nil, g.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("cannot sign the id_token: %w", err)
	}
	return input + "." + b64.EncodeToString(sig), nil
}

// seal returns payload as "<base64 json>.<base64 hmac>".
func (g *signer) seal(v any) (string, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	enc := b64.EncodeToString(body)
	m := hmac.New(sha256.New, g.ticket)
	m.Write([]byte(enc))
	return enc + "." + b64.EncodeToString(m.Sum(nil)), nil
}

// open checks a sealed value and decodes it into v.
func (g *signer) open(sealed string, v any) bool {
	enc, mac, ok := strings.Cut(sealed, ".")
	if !ok {
		return false
	}
	got, err := b64.DecodeString(mac)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, g.ticket)
	m.Write([]byte(enc))
	if !hmac.Equal(got, m.Sum(nil)) {
		return false
	}
	body, err := b64.DecodeString(enc)
	return err == nil && json.Unmarshal(body, v) == nil
}

func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	g, err := s.signer(r.Context())
	if err != nil {
		s.log.Error("oauth signing key", "err", err)
		writeOAuthError(w, errorf(http.StatusServiceUnavailable, "temporarily_unavailable", "Signing key unavailable"))
		return
	}
	pub := g.key.PublicKey
	writeJSON(w, http.StatusOK, map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "use": "sig", "alg": "RS256", "kid": g.kid,
		"n": b64.EncodeToString(pub.N.Bytes()),
		"e": b64.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
	}}})
}
