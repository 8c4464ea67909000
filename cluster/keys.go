package cluster

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// Key format: KeyPrefix followed by 24 to 128 URL-safe characters
// ([A-Za-z0-9_-]). The 12 characters after KeyPrefix are the key's public
// prefix; its ID is "key_" + that prefix. Only the SHA-256 of the whole key is
// ever stored.
const (
	KeyPrefix = "mk_live_"

	keyMinBody       = 24
	keyMaxBody       = 128
	keyGeneratedBody = 40
	keyPublicLen     = 12
	keyIDPrefix      = "key_"
	orgIDPrefix      = "org_"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// GenerateKey returns a new raw API key: KeyPrefix + 40 random base62
// characters from crypto/rand. The caller shows it once and stores only the
// NewKeyRecord made from it.
func GenerateKey() (string, error) {
	for range 8 {
		body, err := randomBase62(keyGeneratedBody)
		if err != nil {
			return "", fmt.Errorf("cannot generate api key: %w", err)
		}
		raw := KeyPrefix + body
		if CheckKeyFormat(raw) == nil {
			return raw, nil
		}
	}
	return "", errors.New("cannot generate api key: random source keeps producing placeholder-like keys")
}

// randomBase62 draws n characters uniformly from base62 by rejection sampling.
func randomBase62(n int) (string, error) {
	out := make([]byte, 0, n)
	buf := make([]byte, 2*n)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return "", err
		}
		for _, b := range buf {
			if b >= 248 { // 248 = 4*62: keep the draw uniform
				continue
			}
			out = append(out, base62[b%62])
			if len(out) == n {
				break
			}
		}
	}
	return string(out), nil
}

// NewKeyRecord validates raw and returns the record a CreateKey or CreateOrg
// command carries: ID and prefix derived from the key, its SHA-256, never the
// key itself. A key that fails CheckKeyFormat gives an error matching
// ErrMalformedKey (and ErrPlaceholderKey when it is a placeholder).
func NewKeyRecord(raw, orgID, label string, at time.Time) (NewKey, error) {
	if err := CheckKeyFormat(raw); err != nil {
		if errors.Is(err, ErrMalformedKey) {
			return NewKey{}, fmt.Errorf("cannot create key record: %w", err)
		}
		return NewKey{}, fmt.Errorf("cannot create key record: %w (%w)", ErrMalformedKey, err)
	}
	if orgID == "" {
		return NewKey{}, fmt.Errorf("cannot create key record: empty org id: %w", ErrInvalidCommand)
	}
	public := keyPublicPart(raw)
	return NewKey{
		KeyID:     keyIDPrefix + public,
		OrgID:     orgID,
		Label:     label,
		Prefix:    public,
		Hash:      sha256.Sum256([]byte(raw)),
		CreatedAt: at.UTC(),
	}, nil
}

// keyPublicPart returns the 12 characters after KeyPrefix of a well-formed key.
func keyPublicPart(raw string) string {
	return raw[len(KeyPrefix) : len(KeyPrefix)+keyPublicLen]
}

// NewOrgID returns a new org ID: "org_" + a ULID with crypto/rand entropy.
func NewOrgID() string {
	return orgIDPrefix + ulid.MustNew(ulid.Timestamp(time.Now()), rand.Reader).String()
}

// CheckKeyFormat returns nil for a well-formed key, or an *AuthError whose
// Reason is ReasonPlaceholderKey (checked first: an obvious documentation
// stand-in) or ReasonMalformedKey.
func CheckKeyFormat(raw string) error {
	if isPlaceholderKey(raw) {
		return authError(ReasonPlaceholderKey)
	}
	if !isWellFormedKey(raw) {
		return authError(ReasonMalformedKey)
	}
	return nil
}

// ExplainKeyFormat is CheckKeyFormat with the reason told to an operator
// (a placeholder; no KeyPrefix; too short or too long, with the bounds; a
// character that is not URL-safe, by its place), never quoting the key: nil
// for a well-formed key, else an error matching ErrPlaceholderKey or
// ErrMalformedKey.
func ExplainKeyFormat(raw string) error {
	err := CheckKeyFormat(raw)
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrPlaceholderKey) {
		return fmt.Errorf("%w: it reads like a documentation stand-in (template syntax, masking, "+
			"one character repeated, or only words such as your, api, key, example), not a random key", err)
	}
	body, ok := strings.CutPrefix(raw, KeyPrefix)
	switch {
	case !ok:
		return fmt.Errorf("%w: it must start with %s", err, KeyPrefix)
	case len(body) < keyMinBody:
		return fmt.Errorf("%w: it has %d characters after %s, at least %d are needed", err, len(body), KeyPrefix, keyMinBody)
	case len(body) > keyMaxBody:
		return fmt.Errorf("%w: it has %d characters after %s, at most %d are allowed", err, len(body), KeyPrefix, keyMaxBody)
	}
	for i := 0; i < len(body); i++ {
		if !isURLSafe(body[i]) {
			return fmt.Errorf("%w: character %d is not URL-safe (after %s only A-Z, a-z, 0-9, _ and - are allowed)",
				err, len(KeyPrefix)+i+1, KeyPrefix)
		}
	}
	return err // not reached: CheckKeyFormat refuses for one of the reasons above
}

func isWellFormedKey(raw string) bool {
	body, ok := strings.CutPrefix(raw, KeyPrefix)
	if !ok || len(body) < keyMinBody || len(body) > keyMaxBody {
		return false
	}
	for i := 0; i < len(body); i++ {
		if !isURLSafe(body[i]) {
			return false
		}
	}
	return true
}

func isURLSafe(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// placeholderFragments anywhere in a key mark it as a stand-in: template
// syntax, masked or truncated keys, the usual "your API key" phrases.
var placeholderFragments = []string{
	"your_api_key", "your-api-key", "yourapikey", "<", ">", "{", "}", "...", "…", "***",
}

// placeholderWords are the words documentation stand-ins are made of; a key
// whose body consists only of these (separated by _ - . * or spaces, or a word
// repeated) is a placeholder. Short on purpose: a real key never reads so.
var placeholderWords = map[string]bool{
	"your": true, "my": true, "the": true, "api": true, "key": true, "keys": true, "apikey": true,
	"here": true, "goes": true, "insert": true, "replace": true, "me": true, "changeme": true,
	"placeholder": true, "example": true, "sample": true, "test": true, "testing": true,
	"dummy": true, "fake": true, "demo": true, "token": true, "secret": true, "redacted": true,
	"todo": true, "tbd": true, "none": true, "null": true, "nil": true, "undefined": true,
	"foo": true, "bar": true, "baz": true, "mnemoverse": true, "hebb": true, "bootstrap": true,
	"mk": true, "live": true,
}

// isPlaceholderKey reports whether raw is obviously a documentation stand-in
// rather than a key: "YOUR_API_KEY", "<API_KEY>", "${API_KEY}", "changeme",
// "mk_live_xxxxxxxx", "****", "mk_live_..." and the like (case-insensitive).
func isPlaceholderKey(raw string) bool {
	s := strings.ToLower(strings.TrimSpace(raw))
	if s == "" {
		return false
	}
	if s[0] == '$' || s[0] == '%' { // an unexpanded environment variable
		return true
	}
	for _, f := range placeholderFragments {
		if strings.Contains(s, f) {
			return true
		}
	}
	body := strings.TrimPrefix(s, strings.ToLower(KeyPrefix))
	return body != "" && consistsOfPlaceholderWords(body)
}

func consistsOfPlaceholderWords(body string) bool {
	fields := strings.FieldsFunc(body, func(r rune) bool {
		return r == '_' || r == '-' || r == '.' || r == '*' || r == ' ' || r == '…'
	})
	for _, f := range fields {
		if !isPlaceholderWord(f) {
			return false
		}
	}
	return true // also when body is only separators ("___", "- -")
}

func isPlaceholderWord(f string) bool {
	if placeholderWords[f] || isRepeatedChar(f) {
		return true
	}
	for w := range placeholderWords {
		if len(f) > len(w) && len(f)%len(w) == 0 && strings.Repeat(w, len(f)/len(w)) == f {
			return true
		}
	}
	return false
}

// isRepeatedChar reports whether f is one character repeated at least three
// times ("xxx", "0000").
func isRepeatedChar(f string) bool {
	if len(f) < 3 {
		return false
	}
	return strings.Count(f, f[:1]) == len(f)
}
