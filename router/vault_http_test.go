package router_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hebbdb/hebb/router"
	"github.com/hebbdb/hebb/router/embedder"
	"github.com/hebbdb/hebb/router/vault"
)

// The harness builds its router without a vault key ring, so these tests
// swap in a router whose Config carries one, on the same cluster.

var vtUUIDRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// vtRing is a fixed key ring (base64 of 32 bytes), as HEBB_VAULT_KEY gives.
func vtRing(t *testing.T) *vault.Ring {
	t.Helper()
	ring, err := vault.Parse("t1:" + base64.StdEncoding.EncodeToString([]byte("hebb-vault-test-key-32-bytes-ok!")))
	if err != nil {
		t.Fatalf("vault.Parse: %v", err)
	}
	return ring
}

// vtServe replaces ts's router by one that seals with ring. Call it again
// after ts.restart(), which starts a router without a ring.
func vtServe(ts *testServer, ring *vault.Ring) {
	t := ts.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	testHTTP.CloseIdleConnections()
	emb, err := embedder.New("hash")
	if err != nil {
		t.Fatalf("embedder: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ts.URL = "http://" + ln.Addr().String()
	ts.Base = ts.URL + "/api/v1"
	ts.srv = router.New(router.Config{PublicURL: ts.URL, AdminToken: ts.opts.adminToken,
		EnableReset: ts.opts.enableReset, DefaultPlan: ts.opts.plan, Vault: ring,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, ts.cl, emb)
	srv := ts.srv
	go func() { _ = srv.Serve(ln) }()
}

// newVaultServer is newTestServer with a vault key ring.
func newVaultServer(t *testing.T, opts ...serverOpt) *testServer {
	t.Helper()
	ts := newTestServer(t, opts...)
	vtServe(ts, vtRing(t))
	return ts
}

// vtStore stores a secret and returns its record.
func vtStore(t *testing.T, ts *testServer, key, alias, value, context string) map[string]any {
	t.Helper()
	r := ts.do("POST", "/vault/secrets", key, map[string]any{"alias": alias, "value": value, "context": context})
	mustStatus(t, r, 200)
	if bytes.Contains(r.Raw, []byte(value)) {
		t.Errorf("store response holds the value: %s", r.Raw)
	}
	return r.Body
}

func TestVaultHTTP(t *testing.T) {
	t.Parallel()
	ts := newVaultServer(t)
	const value = "sk-live-TOPSECRET-0451"
	rec := vtStore(t, ts, ts.Key, "openai.prod", value, "OpenAI key for the nightly summarizer")
	id := str(rec["atom_id"])

	t.Run("store answers metadata only", func(t *testing.T) {
		if got := rmKeys(rec); got != "alias,atom_id,context,created_at" {
			t.Errorf("secret keys %s", got)
		}
		if !vtUUIDRE.MatchString(id) || rec["alias"] != "openai.prod" || rec["context"] != "OpenAI key for the nightly summarizer" {
			t.Errorf("record: %v", rec)
		}
		if _, err := time.Parse(time.RFC3339Nano, str(rec["created_at"])); err != nil {
			t.Errorf("created_at %v: %v", rec["created_at"], err)
		}
	})

	t.Run("alias rules", func(t *testing.T) {
		for _, alias := range []string{strings.Repeat("a", 201), "bad alias!", "", "slash/alias", "é"} {
			r := ts.do("POST", "/vault/secrets", ts.Key, map[string]any{"alias": alias, "value": "v"})
			checkValidation(t, r, "body", "alias")
		}
		for _, alias := range []string{strings.Repeat("b", 200), "a.b-c_d:e", "X9"} {
			vtStore(t, ts, ts.Key, alias, "some-other-value", "")
		}
		checkValidation(t, ts.do("POST", "/vault/secrets", ts.Key, map[string]any{"alias": "no-value"}), "body", "value")
		checkValidation(t, ts.do("POST", "/vault/secrets", ts.Key, map[string]any{"value": "v"}), "body", "alias")
		checkValidation(t, ts.do("POST", "/vault/secrets", ts.Key, map[string]any{"alias": "x", "value": "v", "owner": "me"}))
	})

	t.Run("storing the alias again keeps the atom id", func(t *testing.T) {
		again := vtStore(t, ts, ts.Key, "openai.prod", value+"-rotated", "OpenAI key, rotated")
		if again["atom_id"] != id || again["context"] != "OpenAI key, rotated" {
			t.Errorf("restore: %v", again)
		}
		vtStore(t, ts, ts.Key, "openai.prod", value, "OpenAI key for the nightly summarizer")
	})

	t.Run("a new value without a context keeps the context", func(t *testing.T) {
		r := ts.do("POST", "/vault/secrets", ts.Key, map[string]any{"alias": "openai.prod", "value": value + "-2"})
		mustStatus(t, r, 200)
		if r.Body["atom_id"] != id || r.Body["context"] != "OpenAI key for the nightly summarizer" {
			t.Errorf("store without context: %s", r.Raw)
		}
		if again := vtStore(t, ts, ts.Key, "openai.prod", value, ""); again["context"] != "" {
			t.Errorf("an explicit empty context: %v", again)
		}
		vtStore(t, ts, ts.Key, "openai.prod", value, "OpenAI key for the nightly summarizer")
	})

	t.Run("list and by-alias", func(t *testing.T) {
		r := ts.do("GET", "/vault/secrets", ts.Key, nil)
		mustStatus(t, r, 200)
		var found map[string]any
		for _, x := range list(r.Body["secrets"]) {
			if s := obj(x); s["alias"] == "openai.prod" {
				found = s
			}
			if got := rmKeys(obj(x)); got != "alias,atom_id,context,created_at" {
				t.Errorf("listed secret keys %s", got)
			}
		}
		if found == nil || found["atom_id"] != id {
			t.Errorf("list: %s", r.Raw)
		}
		if n := len(list(r.Body["secrets"])); n != 4 {
			t.Errorf("%d secrets listed, want 4", n)
		}
		one := ts.do("GET", "/vault/secrets/by-alias/openai.prod", ts.Key, nil)
		mustStatus(t, one, 200)
		if one.Body["atom_id"] != id || one.Body["alias"] != "openai.prod" || rmKeys(one.Body) != "alias,atom_id,context,created_at" {
			t.Errorf("by-alias: %s", one.Raw)
		}
		checkEnvelope(t, ts.do("GET", "/vault/secrets/by-alias/nope", ts.Key, nil), 404, "NOT_FOUND")
		_, otherKey := ts.newOrg("other")
		checkEnvelope(t, ts.do("GET", "/vault/secrets/by-alias/openai.prod", otherKey, nil), 404, "NOT_FOUND")
		if r := ts.do("GET", "/vault/secrets", otherKey, nil); r.Status != 200 || len(list(r.Body["secrets"])) != 0 {
			t.Errorf("another org's list: %s", r.Raw)
		}
		for _, raw := range [][]byte{r.Raw, one.Raw} {
			if bytes.Contains(raw, []byte(value)) {
				t.Errorf("a listing holds the value: %s", raw)
			}
		}
	})

	t.Run("by-alias percent-encoded", func(t *testing.T) {
		// Clients encode path segments: encodeURIComponent turns ':' into %3A.
		_, key := ts.newOrg("encoded")
		sid := str(vtStore(t, ts, key, "db.pass:prod-1", "hunter2-enc", "Database password")["atom_id"])
		for _, path := range []string{"db.pass:prod-1", "db.pass%3Aprod-1", "db.pass%3aprod-1", "%64b.pass%3Aprod-1"} {
			one := ts.do("GET", "/vault/secrets/by-alias/"+path, key, nil)
			if one.Status != 200 || one.Body["atom_id"] != sid || one.Body["alias"] != "db.pass:prod-1" {
				t.Errorf("by-alias/%s: %d %s", path, one.Status, one.Raw)
			}
		}
	})

	t.Run("secrets stay out of every memory surface", func(t *testing.T) {
		vtHidden(t, ts, ts.Key, id, "openai.prod", value)
	})

	t.Run("a secret-only account", func(t *testing.T) {
		_, key := ts.newOrg("secrets only")
		sid := str(vtStore(t, ts, key, "db.password", "hunter2-solo", "Database password")["atom_id"])
		st := ts.do("GET", "/memory/stats", key, nil)
		mustStatus(t, st, 200)
		if num(st.Body["total_atoms"]) != 0 || len(list(st.Body["domains"])) != 0 || num(st.Body["avg_importance"]) != 0 {
			t.Errorf("stats of a secret-only account: %s", st.Raw)
		}
		d := ts.do("GET", "/memory/domains", key, nil)
		if d.Status != 200 || len(list(d.Body["domains"])) != 0 {
			t.Errorf("domains of a secret-only account: %s", d.Raw)
		}
		vtHidden(t, ts, key, sid, "db.password", "hunter2-solo")
		del := ts.do("DELETE", "/memory/domain/general", key, nil)
		mustStatus(t, del, 200)
		if num(del.Body["deleted"]) != 0 || num(del.Body["skipped_secrets"]) != 1 {
			t.Errorf("delete domain of secrets: %s", del.Raw)
		}
		if one := ts.do("GET", "/vault/secrets/by-alias/db.password", key, nil); one.Status != 200 {
			t.Errorf("the secret did not survive a domain wipe: %s", one.Raw)
		}
	})

	t.Run("secret refs and supersedes", func(t *testing.T) {
		checkValidation(t, ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "not a vault write",
			"external_ref": "secret:x"}), "body", "external_ref")
		checkValidation(t, ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "shadowing an alias",
			"external_ref": "secret:openai.prod"}), "body", "external_ref")
		r := ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "replacing a secret",
			"supersedes": []string{id}})
		checkEnvelope(t, r, 409, "CONFLICT")
		if d := obj(r.Body["details"]); d["atom_id"] != id || d["successor"] != nil {
			t.Errorf("a secret target is no successor of itself: %s", r.Raw)
		}
	})

	t.Run("secrets survive a restart", func(t *testing.T) {
		ts.restart()
		vtServe(ts, vtRing(t))
		r := ts.do("GET", "/vault/secrets", ts.Key, nil)
		mustStatus(t, r, 200)
		if n := len(list(r.Body["secrets"])); n != 4 {
			t.Errorf("%d secrets after restart, want 4: %s", n, r.Raw)
		}
		one := ts.do("GET", "/vault/secrets/by-alias/openai.prod", ts.Key, nil)
		if one.Status != 200 || one.Body["atom_id"] != id || one.Body["context"] != "OpenAI key for the nightly summarizer" {
			t.Errorf("by-alias after restart: %s", one.Raw)
		}
		if again := vtStore(t, ts, ts.Key, "openai.prod", value, "OpenAI key for the nightly summarizer"); again["atom_id"] != id {
			t.Errorf("store after restart changed the atom id: %v", again)
		}
	})
}

// vtHidden asserts that the secret (id, alias, value) of key's account is
// absent from read, recent, query, stats, lookups and feedback, answers 403
// on atom delete, and shows in export as a value-less row.
func vtHidden(t *testing.T, ts *testServer, key, id, alias, value string) {
	t.Helper()
	ctx := str(ts.do("GET", "/vault/secrets/by-alias/"+alias, key, nil).Body["context"])
	for _, d := range []any{nil, "general"} {
		body := map[string]any{"query": ctx, "min_relevance": 0, "top_k": 500, "domain": d}
		r := ts.do("POST", "/memory/read", key, body)
		mustStatus(t, r, 200)
		if contains(itemIDs(r), id) {
			t.Errorf("read (domain %v) returns the secret: %s", d, r.Raw)
		}
		q := ts.do("POST", "/memory/query", key, map[string]any{"query": ctx, "min_relevance": 0, "top_k": 500})
		mustStatus(t, q, 200)
		if contains(itemIDs(q), id) {
			t.Errorf("query returns the secret: %s", q.Raw)
		}
	}
	rec := ts.do("POST", "/memory/recent", key, map[string]any{"limit": 100})
	mustStatus(t, rec, 200)
	if contains(itemIDs(rec), id) {
		t.Errorf("recent returns the secret: %s", rec.Raw)
	}
	unknown := ts.do("GET", "/memory/atoms/0190c2a1-0000-7000-8000-000000000000", key, nil)
	checkEnvelope(t, unknown, 404, "NOT_FOUND")
	byID := ts.do("GET", "/memory/atoms/"+id, key, nil)
	checkEnvelope(t, byID, 404, "NOT_FOUND")
	rmSameBody(t, byID, unknown)
	chain := ts.do("GET", "/memory/atoms/"+id+"/chain", key, nil)
	checkEnvelope(t, chain, 404, "NOT_FOUND")
	rmSameBody(t, chain, unknown)
	ref := ts.do("POST", "/memory/atoms/by-external-ref", key, map[string]any{"external_ref": "secret:" + alias})
	checkEnvelope(t, ref, 404, "NOT_FOUND")
	refUnknown := ts.do("POST", "/memory/atoms/by-external-ref", key, map[string]any{"external_ref": "no-such-ref"})
	rmSameBody(t, ref, refUnknown)
	fb := ts.do("POST", "/memory/feedback", key, map[string]any{"atom_ids": []string{id}, "outcome": 1})
	mustStatus(t, fb, 200)
	if num(fb.Body["updated_count"]) != 0 {
		t.Errorf("feedback reached the secret: %s", fb.Raw)
	}
	checkEnvelope(t, ts.do("DELETE", "/memory/atoms/"+id, key, nil), 403, "FORBIDDEN")
	exp := ts.do("GET", "/memory/export", key, nil)
	mustStatus(t, exp, 200)
	if bytes.Contains(exp.Raw, []byte(value)) {
		t.Errorf("export holds the value")
	}
	var row map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(exp.Raw), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		if m["atom_id"] == id {
			row = m
		}
	}
	if row == nil || row["atom_type"] != "secret" || row["content"] != ctx || row["external_ref"] != "secret:"+alias {
		t.Errorf("export row of the secret: %v", row)
	}
	for k := range row {
		if k == "value" || k == "sealed" {
			t.Errorf("export row has %q: %v", k, row)
		}
	}
	for _, raw := range [][]byte{byID.Raw, ref.Raw, rec.Raw, fb.Raw} {
		if bytes.Contains(raw, []byte(value)) {
			t.Errorf("a response holds the value: %s", raw)
		}
	}
}

// TestVaultAtRestHTTP stores a distinctive value, restarts (so logs and a
// snapshot are on disk), and reads every file of the data dir: the value
// must appear nowhere, while the secret's context (stored in clear) does.
// A save without a context keeps the context stored when it applies: run
// beside a save that sets one, it never brings back the one before (its
// router read the old context before the other save applied), and a save
// that gives a context answers with it.
func TestVaultConcurrentSavesHTTP(t *testing.T) {
	t.Parallel()
	ts := newVaultServer(t)
	for i := range 12 {
		alias := fmt.Sprintf("race.%d", i)
		vtStore(t, ts, ts.Key, alias, "v0", "old")
		var wg sync.WaitGroup
		wg.Go(func() {
			r := ts.do("POST", "/vault/secrets", ts.Key, map[string]any{"alias": alias, "value": "v1"})
			mustStatus(t, r, 200)
		})
		wg.Go(func() {
			if got := vtStore(t, ts, ts.Key, alias, "v2", "new"); got["context"] != "new" {
				t.Errorf("%s: a save of context new answered %v", alias, got)
			}
		})
		wg.Wait()
		if got := ts.do("GET", "/vault/secrets/by-alias/"+alias, ts.Key, nil).Body["context"]; got != "new" {
			t.Fatalf("%s: context %v after the saves, want new (the save without one kept an older read)", alias, got)
		}
	}
}

func TestVaultAtRestHTTP(t *testing.T) {
	t.Parallel()
	ts := newVaultServer(t, withSnapshotThreshold(4))
	const value = "CANARY-b7f3e1d9-never-on-disk"
	const context = "canary context kept in clear"
	vtStore(t, ts, ts.Key, "canary", "first-"+value, context)
	vtStore(t, ts, ts.Key, "canary", value, context)
	vtStore(t, ts, ts.Key, "canary2", value, context+" 2")
	for i := range 6 {
		ts.write("Filler memory to grow the log past the snapshot threshold "+strings.Repeat("x", i), nil)
	}
	ts.restart()
	vtServe(ts, vtRing(t))
	mustStatus(t, ts.do("GET", "/vault/secrets/by-alias/canary", ts.Key, nil), 200)
	ts.restart() // a second snapshot, taken by a node that restored the first
	vtServe(ts, vtRing(t))

	var files, snaps int
	foundContext := false
	err := filepath.WalkDir(ts.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		if strings.Contains(path, "snapshot") {
			snaps++
		}
		if bytes.Contains(b, []byte(value)) {
			t.Errorf("%s holds the secret value in clear", path)
		}
		if bytes.Contains(b, []byte(context)) {
			foundContext = true
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
	if files == 0 || !foundContext {
		t.Fatalf("the walk read %d files and never met the context: it did not see the data", files)
	}
	if snaps == 0 {
		t.Errorf("no snapshot file in the data dir")
	}
	r := ts.do("GET", "/vault/secrets", ts.Key, nil)
	if r.Status != 200 || len(list(r.Body["secrets"])) != 2 {
		t.Errorf("secrets after restarts: %s", r.Raw)
	}
}
