package router_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router"
	"github.com/hebbdb/hebb/router/embedder"
)

// Modes of fakeEmbeddings.
const (
	fakeOK       = iota
	fakeFailing  // 503 to every request
	fakeResized  // vectors of another dimension
	fakeDisabled // 400 to every request
)

// fakeEmbeddings is an OpenAI-compatible /v1/embeddings that embeds with
// the hashing embedder at dimension 64 (32 when resized).
type fakeEmbeddings struct {
	*httptest.Server
	mode     atomic.Int32
	requests atomic.Int32
}

func newFakeEmbeddings(t *testing.T) *fakeEmbeddings {
	t.Helper()
	f := &fakeEmbeddings{}
	full, small := embedder.NewHash(64), embedder.NewHash(32)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		emb := full
		switch f.mode.Load() {
		case fakeFailing:
			http.Error(w, "model is loading", http.StatusServiceUnavailable)
			return
		case fakeDisabled:
			http.Error(w, "no such model", http.StatusBadRequest)
			return
		case fakeResized:
			emb = small
		}
		vecs, err := emb.Embed(r.Context(), req.Input)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		data := make([]map[string]any, len(vecs))
		for i, v := range vecs {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	}))
	t.Cleanup(f.Close)
	return f
}

// newHTTPEmbedderServer starts a node like newTestServer, but with the http
// embedder on f (no backoff to speak of, one retry).
func newHTTPEmbedderServer(t *testing.T, f *fakeEmbeddings) *testServer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	emb, err := embedder.NewHTTP(ctx, embedder.HTTPConfig{URL: f.URL, Model: "fake-hash-64",
		MaxRetries: 1, Backoff: time.Millisecond})
	if err != nil {
		t.Fatalf("NewHTTP: %v", err)
	}
	ts := &testServer{t: t, dir: t.TempDir(), opts: serverOpts{groups: 1}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	cl, err := cluster.Start(ctx, cluster.Config{DataDir: ts.dir, RaftAddr: "127.0.0.1:0",
		HTTPAddr: ln.Addr().String(), Groups: 1, Replicas: 1, Embedder: emb.Name(), Dim: emb.Dim(), Logger: log})
	if err != nil {
		_ = ln.Close()
		t.Fatalf("cluster.Start: %v", err)
	}
	ts.cl = cl
	ts.URL = "http://" + ln.Addr().String()
	ts.Base = ts.URL + "/api/v1"
	srv := router.New(router.Config{PublicURL: ts.URL, Logger: log}, cl, emb)
	ts.srv = srv
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(ts.stop)
	org, raw, _, err := router.CreateOrg(ctx, cl, "default", "")
	if err != nil {
		t.Fatalf("cannot create org: %v", err)
	}
	ts.Key, ts.OrgID = raw, org.ID
	if info := cl.Info(); info.Embedder != "http:fake-hash-64" || info.Dim != 64 {
		t.Errorf("cluster remembers embedder %q dim %d, want http:fake-hash-64 64", info.Embedder, info.Dim)
	}
	return ts
}

func TestHTTPEmbedderEndToEnd(t *testing.T) {
	f := newFakeEmbeddings(t)
	ts := newHTTPEmbedderServer(t, f)

	id := memWrite(t, ts, ts.Key, "the deployment pipeline runs every Friday afternoon", nil)
	memWrite(t, ts, ts.Key, "my cat is called Miso and likes tuna", nil)
	r := ts.do("POST", "/memory/read", ts.Key, map[string]any{"query": "when does the deployment pipeline run?"})
	mustStatus(t, r, 200)
	if ids := itemIDs(r); len(ids) == 0 || ids[0] != id {
		t.Fatalf("read ranks %v, want %s first: %s", ids, id, r.Raw)
	}
	if n := memTotal(t, ts, ts.Key); n != 2 {
		t.Fatalf("total_atoms %d, want 2", n)
	}

	for _, tc := range []struct {
		name   string
		mode   int32
		reason string
	}{
		{"server failing", fakeFailing, embedder.ReasonHTTPStatus},
		{"server refusing", fakeDisabled, embedder.ReasonHTTPStatus},
		{"dimension changed", fakeResized, embedder.ReasonDimensionMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.mode.Store(tc.mode)
			defer f.mode.Store(fakeOK)
			before := f.requests.Load()
			w := ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "this must not be stored"})
			checkEnvelope(t, w, 503, "INTERNAL")
			if w.Body["retryable"] != true || memReason(w) != tc.reason {
				t.Errorf("retryable %v reason %q, want true %q: %s", w.Body["retryable"], memReason(w), tc.reason, w.Raw)
			}
			if tc.mode == fakeFailing && f.requests.Load()-before != 2 {
				t.Errorf("%d embedder requests, want 2 (one retry)", f.requests.Load()-before)
			}
			b := ts.do("POST", "/memory/write-batch", ts.Key, map[string]any{"items": memItems("batch", 3, nil)})
			checkEnvelope(t, b, 503, "INTERNAL")
			if memReason(b) != tc.reason {
				t.Errorf("write-batch reason %q, want %q: %s", memReason(b), tc.reason, b.Raw)
			}
			rd := ts.do("POST", "/memory/read", ts.Key, map[string]any{"query": "deployment pipeline"})
			checkEnvelope(t, rd, 503, "INTERNAL")
			if rd.Body["retryable"] != true || memReason(rd) != tc.reason {
				t.Errorf("read: retryable %v reason %q, want true %q", rd.Body["retryable"], memReason(rd), tc.reason)
			}
			if n := memTotal(t, ts, ts.Key); n != 2 {
				t.Errorf("total_atoms %d after failed writes, want 2", n)
			}
		})
	}

	// The server is back: writes go through again.
	memWrite(t, ts, ts.Key, "the embedder recovered", nil)
	if n := memTotal(t, ts, ts.Key); n != 3 {
		t.Errorf("total_atoms %d, want 3", n)
	}
}
