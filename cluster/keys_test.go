package cluster

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestGenerateKey(t *testing.T) {
	seen := make(map[string]bool)
	for range 200 {
		raw, err := GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		body, ok := strings.CutPrefix(raw, KeyPrefix)
		if !ok || len(body) != 40 {
			t.Fatalf("GenerateKey() = %q: want %s + 40 characters", raw, KeyPrefix)
		}
		if strings.Trim(body, base62) != "" {
			t.Fatalf("GenerateKey() = %q: body not base62", raw)
		}
		if err := CheckKeyFormat(raw); err != nil {
			t.Fatalf("CheckKeyFormat(generated) = %v", err)
		}
		if seen[raw] {
			t.Fatalf("GenerateKey returned %q twice", raw)
		}
		seen[raw] = true
	}
}

func TestNewKeyRecord(t *testing.T) {
	raw := KeyPrefix + "AbCdEfGhIjKl0123456789zyxwvu"
	at := time.Date(2025, 3, 1, 12, 0, 0, 5, time.FixedZone("X", 3600))
	k, err := NewKeyRecord(raw, "org_1", "ci", at)
	if err != nil {
		t.Fatal(err)
	}
	want := NewKey{
		KeyID:     "key_AbCdEfGhIjKl",
		OrgID:     "org_1",
		Label:     "ci",
		Prefix:    "AbCdEfGhIjKl",
		Hash:      sha256.Sum256([]byte(raw)),
		CreatedAt: at.UTC(),
	}
	if k != want {
		t.Errorf("NewKeyRecord = %+v, want %+v", k, want)
	}
	if k.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt not in UTC: %v", k.CreatedAt)
	}
}

func TestNewKeyRecordErrors(t *testing.T) {
	tests := []struct {
		name  string
		raw   string
		org   string
		wants []error
	}{
		{"malformed", "mk_live_short", "org_1", []error{ErrMalformedKey}},
		{"placeholder", "YOUR_API_KEY", "org_1", []error{ErrMalformedKey, ErrPlaceholderKey}},
		{"empty", "", "org_1", []error{ErrMalformedKey}},
		{"no org", KeyPrefix + strings.Repeat("ab", 12), "", []error{ErrInvalidCommand}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewKeyRecord(tt.raw, tt.org, "", time.Time{})
			for _, want := range tt.wants {
				if !errors.Is(err, want) {
					t.Errorf("NewKeyRecord(%q) error = %v, want %v", tt.raw, err, want)
				}
			}
		})
	}
}

func TestCheckKeyFormat(t *testing.T) {
	valid24 := KeyPrefix + "a1B2c3D4e5F6g7H8i9J0k1L2"
	tests := []struct {
		raw    string
		reason string // "" = valid
	}{
		{valid24, ""},
		{KeyPrefix + "Z9_-" + strings.Repeat("aB3", 41), ""}, // 127 characters
		{KeyPrefix + strings.Repeat("aB3x", 32), ""},         // 128 characters
		{KeyPrefix + "test_0123456789abcdefghij", ""},
		{KeyPrefix + "a1B2c3D4e5F6g7H8i9J0k1L", ReasonMalformedKey}, // 23 characters
		{KeyPrefix + strings.Repeat("aB3x", 32) + "q", ReasonMalformedKey},
		{KeyPrefix + "a1B2c3D4e5F6g7H8i9J0k1L2 ", ReasonMalformedKey},
		{KeyPrefix + "a1B2c3D4e5F6g7H8i9J0k1L+", ReasonMalformedKey},
		{"MK_LIVE_a1B2c3D4e5F6g7H8i9J0k1L2", ReasonMalformedKey},
		{"mk_test_a1B2c3D4e5F6g7H8i9J0k1L2", ReasonMalformedKey},
		{"sk-a1B2c3D4e5F6g7H8i9J0k1L2", ReasonMalformedKey},
		{"abc", ReasonMalformedKey},
		{"mk_live_short", ReasonMalformedKey},
		{"mk_live_", ReasonMalformedKey},
		{"", ReasonMalformedKey},
		{"a", ReasonMalformedKey},
		{"YOUR_API_KEY", ReasonPlaceholderKey},
		{"your-key", ReasonPlaceholderKey},
		{"<API_KEY>", ReasonPlaceholderKey},
		{"${API_KEY}", ReasonPlaceholderKey},
		{"$MNEMOVERSE_API_KEY", ReasonPlaceholderKey},
		{"%HEBB_API_KEY%", ReasonPlaceholderKey},
		{"API_KEY", ReasonPlaceholderKey},
		{"MNEMOVERSE_API_KEY", ReasonPlaceholderKey},
		{"xxxx", ReasonPlaceholderKey},
		{"XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", ReasonPlaceholderKey},
		{"changeme", ReasonPlaceholderKey},
		{"ChangeMe", ReasonPlaceholderKey},
		{"placeholder", ReasonPlaceholderKey},
		{"example", ReasonPlaceholderKey},
		{"test", ReasonPlaceholderKey},
		{"...", ReasonPlaceholderKey},
		{"****", ReasonPlaceholderKey},
		{" your_api_key ", ReasonPlaceholderKey},
		{"mk_live_YOUR_API_KEY", ReasonPlaceholderKey},
		{"mk_live_your-api-key-here", ReasonPlaceholderKey},
		{"mk_live_<your key>", ReasonPlaceholderKey},
		{"mk_live_{{API_KEY}}", ReasonPlaceholderKey},
		{"mk_live_...", ReasonPlaceholderKey},
		{"mk_live_abcd1234...", ReasonPlaceholderKey},
		{"mk_live_abcd****************", ReasonPlaceholderKey},
		{"mk_live_" + strings.Repeat("x", 40), ReasonPlaceholderKey},
		{"mk_live_" + strings.Repeat("0", 24), ReasonPlaceholderKey},
		{"mk_live_" + strings.Repeat("test", 8), ReasonPlaceholderKey},
		{"mk_live_test_test_test_test_test", ReasonPlaceholderKey},
		{"mk_live_insert_your_key_here_please", ""}, // "please" is not a placeholder word
		{"mk_live_insert_your_key_here", ReasonPlaceholderKey},
		{"mk_live_EXAMPLE_EXAMPLE_EXAMPLE", ReasonPlaceholderKey},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			err := CheckKeyFormat(tt.raw)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("CheckKeyFormat(%q) = %v, want nil", tt.raw, err)
				}
				return
			}
			var ae *AuthError
			if !errors.As(err, &ae) || ae.Reason != tt.reason {
				t.Fatalf("CheckKeyFormat(%q) = %v, want reason %s", tt.raw, err, tt.reason)
			}
		})
	}
}

func TestNewOrgID(t *testing.T) {
	a, b := NewOrgID(), NewOrgID()
	if a == b {
		t.Fatalf("NewOrgID returned %q twice", a)
	}
	for _, id := range []string{a, b} {
		body, ok := strings.CutPrefix(id, "org_")
		if !ok || len(body) != 26 || strings.Trim(body, "0123456789ABCDEFGHJKMNPQRSTVWXYZ") != "" {
			t.Errorf("NewOrgID() = %q, want org_ + 26-character ULID", id)
		}
	}
}

func TestAuthErrorIs(t *testing.T) {
	for reason, sentinel := range reasonSentinel {
		err := error(&AuthError{Reason: reason})
		if !errors.Is(err, sentinel) {
			t.Errorf("AuthError{%s} is not %v", reason, sentinel)
		}
		for other, s := range reasonSentinel {
			if other != reason && errors.Is(err, s) {
				t.Errorf("AuthError{%s} is also %v", reason, s)
			}
		}
		if err.Error() != sentinel.Error() {
			t.Errorf("AuthError{%s}.Error() = %q, want %q", reason, err.Error(), sentinel.Error())
		}
	}
}

func FuzzCheckKeyFormat(f *testing.F) {
	for _, s := range []string{"", "abc", "YOUR_API_KEY", "mk_live_", "mk_live_" + strings.Repeat("a1", 12),
		"mk_live_…", "\xff\xfe", "mk_live_ééééééééééééééééééééééééé"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		err := CheckKeyFormat(raw)
		if err == nil {
			if !isWellFormedKey(raw) {
				t.Fatalf("CheckKeyFormat(%q) accepted a malformed key", raw)
			}
			if _, err := NewKeyRecord(raw, "org_1", "", time.Time{}); err != nil {
				t.Fatalf("NewKeyRecord(%q) = %v after CheckKeyFormat accepted it", raw, err)
			}
			return
		}
		var ae *AuthError
		if !errors.As(err, &ae) || (ae.Reason != ReasonMalformedKey && ae.Reason != ReasonPlaceholderKey) {
			t.Fatalf("CheckKeyFormat(%q) = %v: not a malformed/placeholder AuthError", raw, err)
		}
	})
}

// ExplainKeyFormat refuses what CheckKeyFormat refuses, matching the same
// sentinel, and says why without quoting the key.
func TestExplainKeyFormat(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		is        error // nil = accepted
		want      string
	}{
		{"well formed", KeyPrefix + "a1B2c3D4e5F6g7H8i9J0k1L2", nil, ""},
		{"128 characters", KeyPrefix + strings.Repeat("aB3x", 32), nil, ""},
		{"too short", KeyPrefix + "a1B2c3D4e5F6g7H8i9J0k1L", ErrMalformedKey, "it has 23 characters after mk_live_, at least 24"},
		{"too long", KeyPrefix + strings.Repeat("aB3x", 37) + "aB", ErrMalformedKey, "it has 150 characters after mk_live_, at most 128"},
		{"no prefix", "MK_LIVE_a1B2c3D4e5F6g7H8i9J0k1L2", ErrMalformedKey, "must start with mk_live_"},
		{"not URL-safe", KeyPrefix + "a1B2c3D4e5F6g7H8i9J0+1L2", ErrMalformedKey, "character 29 is not URL-safe"},
		{"placeholder", "mk_live_insert_your_key_here", ErrPlaceholderKey, "documentation stand-in"},
		{"long placeholder", KeyPrefix + strings.Repeat("x", 150), ErrPlaceholderKey, "documentation stand-in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ExplainKeyFormat(tc.raw)
			if (err == nil) != (CheckKeyFormat(tc.raw) == nil) {
				t.Fatalf("ExplainKeyFormat = %v, CheckKeyFormat = %v", err, CheckKeyFormat(tc.raw))
			}
			if tc.is == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %v saying %q", err, tc.is, tc.want)
			}
			if strings.Contains(err.Error(), tc.raw) {
				t.Fatalf("the key is quoted: %v", err)
			}
		})
	}
}
