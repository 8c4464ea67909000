package embedder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer is an OpenAI-compatible embeddings server. Text t embeds to
// fakeVector(t, dim), not normalised.
type fakeServer struct {
	*httptest.Server
	mu      sync.Mutex
	dim     int
	reverse bool                                              // answer data in reverse order (indexes stay right)
	script  []func(w http.ResponseWriter) bool                // consumed one per request; true = answered
	handler func(w http.ResponseWriter, r *http.Request) bool // every request, after script; true = answered
	calls   []fakeCall
}

type fakeCall struct {
	Path  string
	Auth  string
	Model string
	Input []string
}

func newFakeServer(t *testing.T, dim int) *fakeServer {
	t.Helper()
	f := &fakeServer{dim: dim}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	var req embeddingsRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{Path: r.URL.Path, Auth: r.Header.Get("Authorization"),
		Model: req.Model, Input: req.Input})
	var step func(http.ResponseWriter) bool
	if len(f.script) > 0 {
		step, f.script = f.script[0], f.script[1:]
	}
	handler, dim, reverse := f.handler, f.dim, f.reverse
	f.mu.Unlock()
	if step != nil && step(w) {
		return
	}
	if handler != nil && handler(w, r) {
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	}
	data := make([]item, len(req.Input))
	for i, text := range req.Input {
		data[i] = item{Object: "embedding", Embedding: fakeVector(text, dim), Index: i}
	}
	if reverse {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
}

// fakeVector is a deterministic, text-dependent, non-unit vector.
func fakeVector(text string, dim int) []float32 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(text))
	seed := h.Sum64()
	v := make([]float32, dim)
	for i := range v {
		seed = seed*6364136223846793005 + 1442695040888963407
		v[i] = float32(int64(seed>>40)%1000) / 10
	}
	return v
}

func (f *fakeServer) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func (f *fakeServer) call(i int) fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[i]
}

func (f *fakeServer) setScript(steps ...func(w http.ResponseWriter) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = steps
}

func (f *fakeServer) setDim(dim int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dim = dim
}

// status answers code with an optional Retry-After.
func status(code int, retryAfter string) func(w http.ResponseWriter) bool {
	return func(w http.ResponseWriter) bool {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		http.Error(w, `{"error":"try later"}`, code)
		return true
	}
}

// body answers 200 with raw.
func body(raw string) func(w http.ResponseWriter) bool {
	return func(w http.ResponseWriter) bool {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(raw))
		return true
	}
}

// sleeps records the waits an HTTP embedder asks for, without waiting.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func (s *sleeps) list() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// newTestHTTP builds an embedder on f with recorded sleeps and probes it.
func newTestHTTP(t *testing.T, f *fakeServer, cfg HTTPConfig) (*HTTP, *sleeps) {
	t.Helper()
	cfg.URL = f.URL
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	h, err := newHTTP(cfg)
	if err != nil {
		t.Fatalf("newHTTP: %v", err)
	}
	s := &sleeps{}
	h.sleep = s.sleep
	if err := h.probe(context.Background()); err != nil {
		t.Fatalf("probe: %v", err)
	}
	return h, s
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text number %d", i)
	}
	return out
}

// wantVectors checks that got[i] is the unit vector along fakeVector(in[i]).
// It reports with Errorf, so goroutines may call it.
func wantVectors(t *testing.T, in []string, got [][]float32, dim int) {
	t.Helper()
	if len(got) != len(in) {
		t.Errorf("%d vectors for %d texts", len(got), len(in))
		return
	}
	for i, v := range got {
		if len(v) != dim {
			t.Errorf("vector %d has dimension %d, want %d", i, len(v), dim)
			return
		}
		want := fakeVector(in[i], dim)
		var norm, wnorm float64
		for j := range v {
			norm += float64(v[j]) * float64(v[j])
			wnorm += float64(want[j]) * float64(want[j])
		}
		if math.Abs(norm-1) > 1e-5 {
			t.Errorf("vector %d has squared norm %v, want 1", i, norm)
		}
		for j := range v {
			if math.Abs(float64(v[j])-float64(want[j])/math.Sqrt(wnorm)) > 1e-5 {
				t.Errorf("vector %d is not text %d's (component %d: %v)", i, i, j, v[j])
				return
			}
		}
	}
}

func reasonOf(t *testing.T, err error) *Error {
	t.Helper()
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("error %v does not wrap ErrUnavailable", err)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *Error", err)
	}
	return e
}

func TestNewHTTPDiscoversDimension(t *testing.T) {
	f := newFakeServer(t, 24)
	h, err := NewHTTP(context.Background(), HTTPConfig{URL: f.URL, Model: "nomic-embed-text"})
	if err != nil {
		t.Fatalf("NewHTTP: %v", err)
	}
	if h.Dim() != 24 || h.Name() != "http:nomic-embed-text" {
		t.Errorf("Dim %d Name %q, want 24 http:nomic-embed-text", h.Dim(), h.Name())
	}
	if n := f.callCount(); n != 1 {
		t.Fatalf("%d requests at construction, want 1 probe", n)
	}
	c := f.call(0)
	if c.Path != "/v1/embeddings" || c.Model != "nomic-embed-text" || len(c.Input) != 1 || c.Auth != "" {
		t.Errorf("probe request %+v", c)
	}
	var _ Embedder = h
}

func TestHTTPURLForms(t *testing.T) {
	f := newFakeServer(t, 4)
	for _, suffix := range []string{"", "/", "/v1", "/v1/", "/v1/embeddings"} {
		t.Run("suffix="+suffix, func(t *testing.T) {
			before := f.callCount()
			if _, err := NewHTTP(context.Background(), HTTPConfig{URL: f.URL + suffix, Model: "m"}); err != nil {
				t.Fatalf("NewHTTP: %v", err)
			}
			if p := f.call(before).Path; p != "/v1/embeddings" {
				t.Errorf("path %q, want /v1/embeddings", p)
			}
		})
	}
}

func TestHTTPInvalidConfig(t *testing.T) {
	for _, tc := range []struct{ name, url, model string }{
		{"no URL", "", "m"},
		{"not http", "ftp://host", "m"},
		{"no host", "http://", "m"},
		{"no model", "http://127.0.0.1:1", " "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewHTTP(context.Background(), HTTPConfig{URL: tc.url, Model: tc.model})
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("error %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestHTTPUnreachableAtBoot(t *testing.T) {
	f := newFakeServer(t, 4)
	url := f.URL
	f.Close()
	_, err := NewHTTP(context.Background(), HTTPConfig{URL: url, Model: "m", MaxRetries: -1})
	if e := reasonOf(t, err); e.Reason != ReasonUnreachable {
		t.Errorf("reason %q, want %s", e.Reason, ReasonUnreachable)
	}
	if !strings.Contains(err.Error(), url) {
		t.Errorf("boot error %q does not name the URL %s", err, url)
	}
}

func TestHTTPEmbed(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n, batch  int
		reverse   bool
		wantCalls int
	}{
		{"empty", 0, 0, false, 0},
		{"one", 1, 0, false, 1},
		{"150 in batches of 64", 150, 0, false, 3},
		{"exact batches", 20, 10, false, 2},
		{"answered out of order", 9, 0, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeServer(t, 32)
			f.reverse = tc.reverse
			h, _ := newTestHTTP(t, f, HTTPConfig{BatchSize: tc.batch})
			in := texts(tc.n)
			got, err := h.Embed(context.Background(), in)
			if err != nil {
				t.Fatalf("Embed: %v", err)
			}
			wantVectors(t, in, got, 32)
			if n := f.callCount() - 1; n != tc.wantCalls {
				t.Errorf("%d requests, want %d", n, tc.wantCalls)
			}
			sent := 0
			for i := 1; i < f.callCount(); i++ {
				batch := h.cfg.BatchSize
				if c := f.call(i); len(c.Input) > batch {
					t.Errorf("request %d carried %d texts, batch size %d", i, len(c.Input), batch)
				} else {
					sent += len(c.Input)
				}
			}
			if sent != tc.n {
				t.Errorf("%d texts sent, want %d", sent, tc.n)
			}
		})
	}
}

func TestHTTPRetries(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		script     []func(http.ResponseWriter) bool
		maxRetries int
		wantCalls  int
		wantReason string // "" = success
		wantStatus int
		minWaits   []time.Duration
	}{
		{"503 then success", []func(http.ResponseWriter) bool{status(503, ""), status(503, "")}, 0, 3, "", 0,
			[]time.Duration{0, 0}},
		{"429 with Retry-After", []func(http.ResponseWriter) bool{status(429, "3")}, 0, 2, "", 0,
			[]time.Duration{3 * time.Second}},
		{"Retry-After as a date", []func(http.ResponseWriter) bool{
			status(503, time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))}, 0, 1, ReasonHTTPStatus, 503, nil},
		{"400 not retried", []func(http.ResponseWriter) bool{status(400, "")}, 0, 1, ReasonHTTPStatus, 400, nil},
		{"retries exhausted", []func(http.ResponseWriter) bool{
			status(500, ""), status(502, ""), status(504, "")}, 2, 3, ReasonHTTPStatus, 504, []time.Duration{0, 0}},
		{"no retries", []func(http.ResponseWriter) bool{status(503, "")}, -1, 1, ReasonHTTPStatus, 503, nil},
		{"bad response not retried", []func(http.ResponseWriter) bool{body(`{"data":`)}, 0, 1, ReasonBadResponse, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeServer(t, 8)
			h, s := newTestHTTP(t, f, HTTPConfig{MaxRetries: tc.maxRetries})
			f.setScript(tc.script...)
			in := texts(3)
			got, err := h.Embed(ctx, in)
			if calls := f.callCount() - 1; calls != tc.wantCalls {
				t.Errorf("%d requests, want %d", calls, tc.wantCalls)
			}
			if tc.wantReason == "" {
				if err != nil {
					t.Fatalf("Embed: %v", err)
				}
				wantVectors(t, in, got, 8)
			} else {
				e := reasonOf(t, err)
				if e.Reason != tc.wantReason || e.Status != tc.wantStatus {
					t.Errorf("reason %q status %d, want %q %d (%v)", e.Reason, e.Status, tc.wantReason, tc.wantStatus, err)
				}
			}
			waits := s.list()
			if len(waits) != len(tc.minWaits) {
				t.Fatalf("waits %v, want %d", waits, len(tc.minWaits))
			}
			for i, w := range waits {
				if w < tc.minWaits[i] || w <= 0 {
					t.Errorf("wait %d is %v, want at least %v and positive", i, w, tc.minWaits[i])
				}
			}
		})
	}
}

func TestHTTPBackoffGrows(t *testing.T) {
	h, err := newHTTP(HTTPConfig{URL: "http://x", Model: "m", Backoff: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{100, 200, 400, 800, 1600, 2000, 2000}
	for i, w := range want {
		if got := h.backoff(i); got != w*time.Millisecond {
			t.Errorf("backoff(%d) = %v, want %v", i, got, w*time.Millisecond)
		}
		for range 20 {
			if j := equalJitter(w * time.Millisecond); j < w*time.Millisecond/2 || j > w*time.Millisecond {
				t.Fatalf("jitter of %v gave %v", w*time.Millisecond, j)
			}
		}
	}
}

func TestHTTPRetryAfterBeyondDeadline(t *testing.T) {
	f := newFakeServer(t, 8)
	h, s := newTestHTTP(t, f, HTTPConfig{})
	f.setScript(status(503, "5"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := h.Embed(ctx, texts(1))
	if e := reasonOf(t, err); e.Reason != ReasonHTTPStatus || e.Status != 503 {
		t.Errorf("error %v, want the 503", err)
	}
	if len(s.list()) != 0 || f.callCount() != 2 {
		t.Errorf("waited %v over %d requests; a Retry-After past the deadline is not waited for", s.list(), f.callCount()-1)
	}
}

func TestHTTPTimeout(t *testing.T) {
	f := newFakeServer(t, 8)
	release := make(chan struct{})
	defer close(release)
	h, _ := newTestHTTP(t, f, HTTPConfig{Timeout: 50 * time.Millisecond, MaxRetries: 1})
	f.mu.Lock()
	f.handler = func(w http.ResponseWriter, r *http.Request) bool {
		select {
		case <-r.Context().Done():
		case <-release:
		}
		return true
	}
	f.mu.Unlock()
	t.Run("per request", func(t *testing.T) {
		before := f.callCount()
		_, err := h.Embed(context.Background(), texts(2))
		if e := reasonOf(t, err); e.Reason != ReasonTimeout {
			t.Errorf("reason %q, want %s (%v)", e.Reason, ReasonTimeout, err)
		}
		if n := f.callCount() - before; n != 2 {
			t.Errorf("%d requests, want 2 (a timeout is retried once)", n)
		}
	})
	t.Run("caller deadline", func(t *testing.T) {
		h.cfg.Timeout = time.Minute
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := h.Embed(ctx, texts(2))
		if e := reasonOf(t, err); e.Reason != ReasonTimeout {
			t.Errorf("reason %q, want %s (%v)", e.Reason, ReasonTimeout, err)
		}
	})
	t.Run("caller cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := h.Embed(ctx, texts(2))
		if e := reasonOf(t, err); e.Reason != ReasonCanceled {
			t.Errorf("reason %q, want %s (%v)", e.Reason, ReasonCanceled, err)
		}
	})
}

func TestHTTPDimensionChange(t *testing.T) {
	f := newFakeServer(t, 16)
	h, _ := newTestHTTP(t, f, HTTPConfig{})
	f.setDim(8)
	_, err := h.Embed(context.Background(), texts(2))
	if e := reasonOf(t, err); e.Reason != ReasonDimensionMismatch {
		t.Errorf("reason %q, want %s (%v)", e.Reason, ReasonDimensionMismatch, err)
	}
	if n := f.callCount(); n != 2 {
		t.Errorf("%d requests, want 2 (a dimension change is not retried)", n)
	}
}

func TestHTTPBadResponses(t *testing.T) {
	for _, tc := range []struct{ name, body, reason string }{
		{"not JSON", `<html>`, ReasonBadResponse},
		{"error object", `{"error":{"message":"no"}}`, ReasonBadResponse},
		{"too few", `{"data":[{"embedding":[1,2],"index":0}]}`, ReasonBadResponse},
		{"repeated index", `{"data":[{"embedding":[1,2],"index":0},{"embedding":[1,2],"index":0}]}`, ReasonBadResponse},
		{"index out of range", `{"data":[{"embedding":[1,2],"index":0},{"embedding":[1,2],"index":2}]}`, ReasonBadResponse},
		{"zero vector", `{"data":[{"embedding":[0,0],"index":0},{"embedding":[1,2],"index":1}]}`, ReasonBadResponse},
		{"empty vector", `{"data":[{"embedding":[],"index":0},{"embedding":[1,2],"index":1}]}`, ReasonBadResponse},
		{"overflow", `{"data":[{"embedding":[1e300,2],"index":0},{"embedding":[1,2],"index":1}]}`, ReasonBadResponse},
		{"mixed dimensions", `{"data":[{"embedding":[1,2],"index":0},{"embedding":[1,2,3],"index":1}]}`,
			ReasonDimensionMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeServer(t, 2)
			h, _ := newTestHTTP(t, f, HTTPConfig{})
			f.setScript(body(tc.body))
			_, err := h.Embed(context.Background(), texts(2))
			if e := reasonOf(t, err); e.Reason != tc.reason {
				t.Errorf("reason %q, want %s (%v)", e.Reason, tc.reason, err)
			}
		})
	}
	t.Run("no index keeps position", func(t *testing.T) {
		f := newFakeServer(t, 2)
		h, _ := newTestHTTP(t, f, HTTPConfig{})
		f.setScript(body(`{"data":[{"embedding":[3,4]},{"embedding":[0,2]}]}`))
		got, err := h.Embed(context.Background(), texts(2))
		if err != nil {
			t.Fatalf("Embed: %v", err)
		}
		if got[0][0] != 0.6 || got[0][1] != 0.8 || got[1][0] != 0 || got[1][1] != 1 {
			t.Errorf("vectors %v", got)
		}
	})
}

func TestHTTPAPIKey(t *testing.T) {
	const key = "sk-very-secret-key-123"
	f := newFakeServer(t, 4)
	h, _ := newTestHTTP(t, f, HTTPConfig{APIKey: key})
	if auth := f.call(0).Auth; auth != "Bearer "+key {
		t.Errorf("Authorization %q, want the key as Bearer", auth)
	}
	// A server that echoes the key in its error body.
	echo := func(w http.ResponseWriter) bool {
		http.Error(w, "invalid api key Bearer "+key, http.StatusUnauthorized)
		return true
	}
	f.setScript(echo)
	_, err := h.Embed(context.Background(), texts(1))
	if e := reasonOf(t, err); e.Status != http.StatusUnauthorized {
		t.Errorf("status %d, want 401", e.Status)
	}
	if strings.Contains(err.Error(), key) {
		t.Errorf("error %q holds the API key", err)
	}
	f.mu.Lock()
	f.handler = func(w http.ResponseWriter, r *http.Request) bool {
		panic(http.ErrAbortHandler) // a dropped connection
	}
	f.mu.Unlock()
	_, err = NewHTTP(context.Background(), HTTPConfig{URL: f.URL, Model: "m", APIKey: key, MaxRetries: -1})
	if err == nil || strings.Contains(err.Error(), key) {
		t.Errorf("boot error %v is nil or holds the API key", err)
	}
}

func TestHTTPConcurrentEmbeds(t *testing.T) {
	f := newFakeServer(t, 16)
	h, _ := newTestHTTP(t, f, HTTPConfig{BatchSize: 4})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			in := texts(10 + g)
			got, err := h.Embed(context.Background(), in)
			if err != nil {
				t.Errorf("Embed: %v", err)
				return
			}
			wantVectors(t, in, got, 16)
		})
	}
	wg.Wait()
}
