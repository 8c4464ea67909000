package chat

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hebbdb/hebb/cluster"
)

// Token purposes: each signs with its own key derived from the cluster's
// chat secret (meta group), so a token of one kind never verifies as another.
const (
	purposeRealtime = "hebb-chat realtime token v1"
	purposeState    = "hebb-chat oidc state v1"
	realtimeIssuer  = "hebb-chat"
	realtimeAud     = "partykit"
)

// keyCache holds the chat secret once this node knows it.
type keyCache struct {
	mu     sync.Mutex
	secret []byte
}

// secret returns the cluster's chat secret, creating it on first use (the
// first ChatSetKey to commit wins, so every node ends with the same one).
func (s *Server) secret(ctx context.Context) ([]byte, error) {
	s.keys.mu.Lock()
	defer s.keys.mu.Unlock()
	if s.keys.secret != nil {
		return s.keys.secret, nil
	}
	k, ok := s.b.Meta().ChatKey()
	if !ok {
		fresh := make([]byte, 32)
		_, _ = rand.Read(fresh)
		stored, err := s.cfg.Keys.SealKey(fresh, keyPurpose, "")
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errSigningKey, err)
		}
		res, err := s.b.ProposeMeta(ctx, cluster.EncodeChatSetKey(cluster.ChatSetKey{
			Key: cluster.ChatKey{Secret: stored, CreatedAt: time.Now().UTC()}}))
		if err != nil {
			return nil, fmt.Errorf("cannot create the chat signing key: %w", err)
		}
		if k, ok = res.(cluster.ChatKey); !ok {
			return nil, fmt.Errorf("cannot create the chat signing key: %v", res)
		}
	}
	secret, err := s.cfg.Keys.OpenKey(k.Secret, keyPurpose, "")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errSigningKey, err)
	}
	s.keys.secret = secret
	return secret, nil
}

// errSigningKey: the chat signing key cannot be opened, or made, with this
// node's vault key (503 signing_key_unavailable; it answered 500).
var errSigningKey = errors.New("chat: the signing key cannot be opened or made with this node's vault key")

// knownSecret returns the secret without creating it: verification of a
// token fails anyway when no key exists yet (or it cannot be opened).
func (s *Server) knownSecret() []byte {
	s.keys.mu.Lock()
	defer s.keys.mu.Unlock()
	if s.keys.secret == nil {
		if k, ok := s.b.Meta().ChatKey(); ok {
			secret, err := s.cfg.Keys.OpenKey(k.Secret, keyPurpose, "")
			if err != nil {
				s.log.Error("chat signing key", "err", err)
				return nil
			}
			s.keys.secret = secret
		}
	}
	return s.keys.secret
}

// keyPurpose names the chat secret in its sealing (vault.Ring.SealKey).
const keyPurpose = "chat signing key"

func subkey(secret []byte, purpose string) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(purpose))
	return mac.Sum(nil)
}

func mac(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

var b64 = base64.RawURLEncoding

// realtimeClaims are the claims of a realtime (partykit) token: a JWT
// signed HS256.
type realtimeClaims struct {
	Iss  string `json:"iss"`
	Aud  string `json:"aud"`
	Sub  string `json:"sub"`  // user ID
	Room string `json:"room"` // the only room it opens
	Sid  string `json:"sid"`  // the session it was issued to
	Iat  int64  `json:"iat"`
	Exp  int64  `json:"exp"`
}

func (s *Server) signRealtime(ctx context.Context, cl realtimeClaims) (string, error) {
	secret, err := s.secret(ctx)
	if err != nil {
		return "", err
	}
	cl.Iss, cl.Aud = realtimeIssuer, realtimeAud
	payload, _ := json.Marshal(cl)
	head := b64.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + b64.EncodeToString(payload)
	return head + "." + b64.EncodeToString(mac(subkey(secret, purposeRealtime), head)), nil
}

// verifyRealtime checks a realtime token's signature, issuer, audience and
// expiry at now.
func (s *Server) verifyRealtime(raw string, now time.Time) (realtimeClaims, error) {
	var cl realtimeClaims
	secret := s.knownSecret()
	parts := strings.Split(raw, ".")
	if secret == nil || len(parts) != 3 {
		return cl, ErrToken
	}
	sig, err := b64.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, mac(subkey(secret, purposeRealtime), parts[0]+"."+parts[1])) {
		return cl, ErrToken
	}
	payload, err := b64.DecodeString(parts[1])
	if err != nil || json.Unmarshal(payload, &cl) != nil {
		return cl, ErrToken
	}
	if cl.Iss != realtimeIssuer || cl.Aud != realtimeAud || now.Unix() >= cl.Exp {
		return cl, ErrToken
	}
	return cl, nil
}

// seal signs v for a cookie: base64url(JSON) "." base64url(HMAC).
func (s *Server) seal(ctx context.Context, v any) (string, error) {
	secret, err := s.secret(ctx)
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("cannot seal state: %w", err)
	}
	body := b64.EncodeToString(payload)
	return body + "." + b64.EncodeToString(mac(subkey(secret, purposeState), body)), nil
}

// unseal verifies a sealed value and decodes it into v.
func (s *Server) unseal(raw string, v any) error {
	secret := s.knownSecret()
	body, sigText, ok := strings.Cut(raw, ".")
	if secret == nil || !ok {
		return ErrToken
	}
	sig, err := b64.DecodeString(sigText)
	if err != nil || !hmac.Equal(sig, mac(subkey(secret, purposeState), body)) {
		return ErrToken
	}
	payload, err := b64.DecodeString(body)
	if err != nil {
		return ErrToken
	}
	d := json.NewDecoder(bytes.NewReader(payload))
	if d.Decode(v) != nil {
		return ErrToken
	}
	return nil
}
