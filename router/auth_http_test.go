package router_test

import (
	"net/http"
	"testing"
)

func TestAuthHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	_, okKey := ts.newOrg("authed")
	r := ts.admin("POST", "/admin/v1/orgs/"+ts.OrgID+"/keys", map[string]any{"label": "doomed"})
	mustStatus(t, r, 200)
	revoked, revokedID := str(r.Body["api_key"]), str(r.Body["key_id"])
	mustStatus(t, ts.do("GET", "/memory/stats", revoked, nil), 200)
	r = ts.admin("DELETE", "/admin/v1/keys/"+revokedID, nil)
	mustStatus(t, r, 200)
	if r.Body["key_id"] != revokedID || r.Body["revoked"] != true {
		t.Fatalf("revoke body %s", r.Raw)
	}
	unknown := "mk_live_Q7w2Rt9yUe4Io1Pa6Sd3Fg8Hj5Kl0ZxCvBnM"

	t.Run("accepted", func(t *testing.T) {
		cases := []struct {
			name   string
			header string
			value  string
		}{
			{"x-api-key", "X-Api-Key", okKey},
			{"bearer", "Authorization", "Bearer " + okKey},
			{"bearer lowercase scheme", "Authorization", "bearer " + okKey},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				h := http.Header{}
				h.Set(tc.header, tc.value)
				r := ts.doH("GET", "/memory/stats", h, nil)
				mustStatus(t, r, 200)
				if r.Header.Get("X-Request-Id") == "" {
					t.Error("no X-Request-Id on a success")
				}
			})
		}
	})

	t.Run("rejected", func(t *testing.T) {
		cases := []struct {
			name   string
			header string
			value  string
			reason string
		}{
			{"no header", "", "", "missing_key"},
			{"empty x-api-key", "X-Api-Key", "  ", "missing_key"},
			{"placeholder", "X-Api-Key", "mk_live_YOUR_API_KEY", "placeholder_key"},
			{"placeholder bearer", "Authorization", "Bearer mk_live_YOUR_API_KEY", "placeholder_key"},
			{"malformed", "X-Api-Key", "abc", "malformed_key"},
			{"malformed bearer", "Authorization", "Bearer abc", "malformed_key"},
			{"unknown", "X-Api-Key", unknown, "invalid_key"},
			{"unknown bearer", "Authorization", "Bearer " + unknown, "invalid_key"},
			{"other scheme", "Authorization", "Basic " + okKey, "malformed_key"},
			{"revoked", "X-Api-Key", revoked, "revoked_key"},
			{"revoked bearer", "Authorization", "Bearer " + revoked, "revoked_key"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				h := http.Header{}
				if tc.header != "" {
					h.Set(tc.header, tc.value)
				}
				for _, ep := range []struct{ method, path string }{
					{"GET", "/memory/stats"}, {"POST", "/memory/write"}, {"POST", "/memory/read"},
				} {
					r := ts.doH(ep.method, ep.path, h, map[string]any{"content": "x", "query": "x"})
					checkEnvelope(t, r, 401, "UNAUTHORIZED")
					d := obj(r.Body["details"])
					if d["reason"] != tc.reason {
						t.Errorf("%s %s: reason %v, want %s", ep.method, ep.path, d["reason"], tc.reason)
					}
					if d["keys_url"] != ts.URL+"/console/keys" {
						t.Errorf("keys_url %v", d["keys_url"])
					}
				}
			})
		}
	})

	t.Run("revoked key stays revoked for the org's other keys", func(t *testing.T) {
		mustStatus(t, ts.do("GET", "/memory/stats", ts.Key, nil), 200)
	})

	t.Run("health is public", func(t *testing.T) {
		for _, p := range []string{"/health", "/health/ready"} {
			mustStatus(t, ts.do("GET", p, "", nil), 200)
			mustStatus(t, ts.do("GET", p, "abc", nil), 200)
		}
	})
}
