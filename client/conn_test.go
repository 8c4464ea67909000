package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// seen is one request the fake server received.
type seen struct {
	method, path string
	header       http.Header
	body         string
}

// fake is a scripted server: answer n (0-based) is given by script(n).
type fake struct {
	mu     sync.Mutex
	calls  []seen
	script func(n int, w http.ResponseWriter)
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.calls)
	f.calls = append(f.calls, seen{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: string(b)})
	f.mu.Unlock()
	f.script(n, w)
}

func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func (f *fake) call(i int) seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[i]
}

// envelope writes an error answer.
func envelope(w http.ResponseWriter, status int, code string, retryable bool, reason string) {
	details := "null"
	if reason != "" {
		details = `{"reason":"` + reason + `"}`
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, `{"code":"`+code+`","message":"m","requestId":"req_x","retryable":`+
		map[bool]string{true: "true", false: "false"}[retryable]+`,"details":`+details+`}`)
}

func okJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, body)
}

// hangUp closes the connection without an answer: a transport error.
func hangUp(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// newTestClient starts f and returns a client whose back-off sleeps are
// recorded instead of slept.
func newTestClient(t *testing.T, f *fake, opts ...Option) (*Client, *[]time.Duration) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	// No keep-alive: net/http would itself retry a request on a reused
	// connection that the server closed, hiding transport errors.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	c, err := New(srv.URL+"/api/v1", "mk_live_test", append([]Option{WithHTTPClient(hc)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var waits []time.Duration
	c.c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	c.c.rnd = func() float64 { return 0.5 }
	return c, &waits
}

const batchOK = `{"total_count":1,"stored_count":1,"results":[{"index":0,"stored":true,"atom_id":"a","importance":1,"reason":"","error":null}]}`

func TestRetryOnAnswers(t *testing.T) {
	tests := []struct {
		name      string
		answers   func(n int, w http.ResponseWriter)
		wantCalls int
		wantErr   error
		wantWaits []time.Duration
	}{
		{
			name: "503 retryable is retried until success",
			answers: func(n int, w http.ResponseWriter) {
				if n < 2 {
					envelope(w, 503, CodeInternal, true, "")
					return
				}
				okJSON(w, `{"items":[],"episodic_hit":false,"query_concepts":[],"expanded_concepts":[],"search_time_ms":1}`)
			},
			wantCalls: 3,
			wantWaits: []time.Duration{75 * time.Millisecond, 150 * time.Millisecond},
		},
		{
			name:      "400 is not retried",
			answers:   func(n int, w http.ResponseWriter) { envelope(w, 400, CodeValidation, false, "") },
			wantCalls: 1, wantErr: ErrValidation,
		},
		{
			name:      "409 is not retried",
			answers:   func(n int, w http.ResponseWriter) { envelope(w, 409, CodeConflict, false, "") },
			wantCalls: 1, wantErr: ErrConflict,
		},
		{
			name:      "503 not retryable is not retried",
			answers:   func(n int, w http.ResponseWriter) { envelope(w, 503, CodeInternal, false, "consolidation_disabled") },
			wantCalls: 1, wantErr: ErrUnavailable,
		},
		{
			name:      "retryable errors stop after MaxAttempts",
			answers:   func(n int, w http.ResponseWriter) { envelope(w, 503, CodeInternal, true, "") },
			wantCalls: 4, wantErr: ErrUnavailable,
			wantWaits: []time.Duration{75 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond},
		},
		{
			name: "Retry-After is honoured",
			answers: func(n int, w http.ResponseWriter) {
				if n == 0 {
					w.Header().Set("Retry-After", "2")
					envelope(w, 429, CodeRateLimited, true, "daily_query_quota")
					return
				}
				okJSON(w, `{"items":[]}`)
			},
			wantCalls: 2,
			wantWaits: []time.Duration{2 * time.Second},
		},
		{
			name: "a Retry-After beyond MaxRetryAfter is returned",
			answers: func(n int, w http.ResponseWriter) {
				w.Header().Set("Retry-After", "36000")
				envelope(w, 429, CodeRateLimited, true, "daily_query_quota")
			},
			wantCalls: 1, wantErr: ErrRateLimited,
		},
		{
			name:      "atom limit (429, not retryable) is not retried",
			answers:   func(n int, w http.ResponseWriter) { envelope(w, 429, CodeRateLimited, false, "atom_limit") },
			wantCalls: 1, wantErr: ErrRateLimited,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{script: tc.answers}
			c, waits := newTestClient(t, f)
			_, err := c.Read(context.Background(), ReadRequest{Query: "q"})
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if f.count() != tc.wantCalls {
				t.Fatalf("calls = %d, want %d", f.count(), tc.wantCalls)
			}
			if len(*waits) != len(tc.wantWaits) {
				t.Fatalf("waits = %v, want %v", *waits, tc.wantWaits)
			}
			for i, w := range tc.wantWaits {
				if (*waits)[i] != w {
					t.Fatalf("waits = %v, want %v", *waits, tc.wantWaits)
				}
			}
		})
	}
}

func TestRetryOnTransportErrors(t *testing.T) {
	hangTwice := func(ok string) func(n int, w http.ResponseWriter) {
		return func(n int, w http.ResponseWriter) {
			if n < 2 {
				hangUp(w)
				return
			}
			okJSON(w, ok)
		}
	}
	tests := []struct {
		name      string
		call      func(c *Client) error
		answer    string
		wantCalls int
	}{
		{"read is retried", func(c *Client) error {
			_, err := c.Read(context.Background(), ReadRequest{Query: "q"})
			return err
		}, `{"items":[]}`, 3},
		{"GET is retried", func(c *Client) error {
			_, err := c.Stats(context.Background())
			return err
		}, `{"total_atoms":1}`, 3},
		{"write-batch with a key is retried", func(c *Client) error {
			_, err := c.WriteBatch(context.Background(), BatchWriteRequest{Items: []WriteRequest{{Content: "x"}}})
			return err
		}, batchOK, 3},
		{"write is not retried", func(c *Client) error {
			_, err := c.Write(context.Background(), WriteRequest{Content: "x"})
			return err
		}, `{}`, 1},
		{"write_batch (no idempotency) is not retried", func(c *Client) error {
			_, err := c.WriteBatchRooms(context.Background(), BatchWriteRequest{Items: []WriteRequest{{Content: "x"}}})
			return err
		}, batchOK, 1},
		{"feedback is not retried", func(c *Client) error {
			_, err := c.Feedback(context.Background(), FeedbackRequest{AtomIDs: []string{"a"}, Outcome: 1})
			return err
		}, `{}`, 1},
		// A retry of a removal that happened answers 404.
		{"an admin's user removal is not retried", func(c *Client) error {
			_, err := (&AdminClient{c: c.c}).RemoveUser(context.Background(), "u@example.com", "org")
			return err
		}, `{"removed":true}`, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{script: hangTwice(tc.answer)}
			c, _ := newTestClient(t, f)
			err := tc.call(c)
			if f.count() != tc.wantCalls {
				t.Fatalf("calls = %d, want %d (err %v)", f.count(), tc.wantCalls, err)
			}
			var te *TransportError
			if tc.wantCalls == 1 && !errors.As(err, &te) {
				t.Fatalf("err = %v, want a TransportError", err)
			}
			if tc.wantCalls > 1 && err != nil {
				t.Fatalf("err = %v after retries", err)
			}
		})
	}
}

func TestIdempotencyKeyReusedAcrossRetries(t *testing.T) {
	tests := []struct {
		name   string
		key    string
		answer func(n int, w http.ResponseWriter)
	}{
		{"generated key, retryable 503", "", func(n int, w http.ResponseWriter) {
			if n < 2 {
				envelope(w, 503, CodeInternal, true, "")
				return
			}
			okJSON(w, batchOK)
		}},
		{"caller's key, transport errors", "my-key-1", func(n int, w http.ResponseWriter) {
			if n < 2 {
				hangUp(w)
				return
			}
			okJSON(w, batchOK)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{script: tc.answer}
			c, _ := newTestClient(t, f)
			res, err := c.WriteBatch(context.Background(), BatchWriteRequest{Items: []WriteRequest{{Content: "x"}}, IdempotencyKey: tc.key})
			if err != nil {
				t.Fatal(err)
			}
			if f.count() != 3 {
				t.Fatalf("calls = %d, want 3", f.count())
			}
			key := f.call(0).header.Get("Idempotency-Key")
			if key == "" || tc.key != "" && key != tc.key {
				t.Fatalf("first key %q (caller gave %q)", key, tc.key)
			}
			for i := 1; i < 3; i++ {
				if got := f.call(i).header.Get("Idempotency-Key"); got != key {
					t.Fatalf("retry %d sent key %q, first sent %q", i, got, key)
				}
			}
			if res.IdempotencyKey != key {
				t.Fatalf("result key %q, sent %q", res.IdempotencyKey, key)
			}
			if f.call(0).path != "/api/v1/memory/write-batch" {
				t.Fatalf("path %s", f.call(0).path)
			}
		})
	}
	t.Run("two logical calls get two keys", func(t *testing.T) {
		f := &fake{script: func(n int, w http.ResponseWriter) { okJSON(w, batchOK) }}
		c, _ := newTestClient(t, f)
		for i := 0; i < 2; i++ {
			if _, err := c.WriteBatch(context.Background(), BatchWriteRequest{Items: []WriteRequest{{Content: "x"}}}); err != nil {
				t.Fatal(err)
			}
		}
		if a, b := f.call(0).header.Get("Idempotency-Key"), f.call(1).header.Get("Idempotency-Key"); a == b {
			t.Fatalf("both calls sent key %q", a)
		}
	})
}

func TestRetryStopsAtDeadline(t *testing.T) {
	f := &fake{script: func(n int, w http.ResponseWriter) {
		w.Header().Set("Retry-After", "20")
		envelope(w, 503, CodeInternal, true, "")
	}}
	c, waits := newTestClient(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.Stats(ctx)
	if !errors.Is(err, ErrUnavailable) || f.count() != 1 || len(*waits) != 0 {
		t.Fatalf("err %v, calls %d, waits %v: a wait past the deadline must end the call", err, f.count(), *waits)
	}
}

func TestBackoff(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 10, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	tests := []struct {
		n        int
		rnd      float64
		min, max time.Duration
	}{
		{0, 0, 50 * time.Millisecond, 50 * time.Millisecond},
		{0, 0.999, 50 * time.Millisecond, 100 * time.Millisecond},
		{1, 0, 100 * time.Millisecond, 100 * time.Millisecond},
		{3, 0.999, 400 * time.Millisecond, 800 * time.Millisecond},
		{4, 0.999, 500 * time.Millisecond, time.Second},
		{30, 0.5, 750 * time.Millisecond, 750 * time.Millisecond},
	}
	for _, tc := range tests {
		got := p.backoff(tc.n, tc.rnd)
		if got < tc.min || got > tc.max {
			t.Errorf("backoff(%d, %v) = %v, want in [%v, %v]", tc.n, tc.rnd, got, tc.min, tc.max)
		}
	}
}

func TestRequestEncoding(t *testing.T) {
	tests := []struct {
		name string
		call func(c *Client) error
		want string
	}{
		{"read sends only what is set", func(c *Client) error {
			_, err := c.Read(context.Background(), ReadRequest{Query: "q", TopK: Ptr(5), MinRelevance: Ptr(0.0)})
			return err
		}, `{"query":"q","top_k":5,"min_relevance":0}`},
		{"graph sends an explicit zero floor", func(c *Client) error {
			_, err := c.Graph(context.Background(), GraphRequest{Seeds: []string{"a"}, MinWeight: Ptr(0.0)})
			return err
		}, `{"seeds":["a"],"min_weight":0}`},
		{"member update omits an unset expiry", func(c *Client) error {
			_, err := c.UpdateMember(context.Background(), "room_1", "org_1", MemberUpdate{Scope: ScopeRead})
			return err
		}, `{"scope":"read"}`},
		{"member update sends an explicit null", func(c *Client) error {
			_, err := c.UpdateMember(context.Background(), "room_1", "org_1", MemberUpdate{ExpiresAt: Null[time.Time]()})
			return err
		}, `{"expires_at":null}`},
		{"member update sends a time", func(c *Client) error {
			at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
			_, err := c.UpdateMember(context.Background(), "room_1", "org_1", MemberUpdate{ExpiresAt: Some(at)})
			return err
		}, `{"expires_at":"2030-01-02T03:04:05Z"}`},
		{"write with metadata", func(c *Client) error {
			_, err := c.Write(context.Background(), WriteRequest{Content: "c", Metadata: map[string]any{"k": 1}})
			return err
		}, `{"content":"c","metadata":{"k":1}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{script: func(n int, w http.ResponseWriter) { okJSON(w, `{}`) }}
			c, _ := newTestClient(t, f)
			if err := tc.call(c); err != nil {
				t.Fatal(err)
			}
			got := f.call(0)
			if got.body != tc.want {
				t.Fatalf("body %s, want %s", got.body, tc.want)
			}
			if got.header.Get("X-Api-Key") != "mk_live_test" || got.header.Get("Content-Type") != "application/json" {
				t.Fatalf("headers %v", got.header)
			}
		})
	}
}

func TestNullableRoundTrip(t *testing.T) {
	type doc struct {
		A Nullable[int] `json:"a,omitzero"`
	}
	tests := []struct {
		in   doc
		want string
	}{
		{doc{}, `{}`},
		{doc{A: Null[int]()}, `{"a":null}`},
		{doc{A: Some(0)}, `{"a":0}`},
	}
	for _, tc := range tests {
		b, err := json.Marshal(tc.in)
		if err != nil || string(b) != tc.want {
			t.Fatalf("marshal %+v = %s %v, want %s", tc.in, b, err, tc.want)
		}
		var back doc
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.A.IsZero() != tc.in.A.IsZero() || back.A.IsNull() != tc.in.A.IsNull() {
			t.Fatalf("round trip of %s: %+v", b, back)
		}
		if v, ok := back.A.Get(); ok != (!tc.in.A.IsZero() && !tc.in.A.IsNull()) || v != 0 {
			t.Fatalf("Get of %s = %v %v", b, v, ok)
		}
	}
}

func TestNewNormalizesBaseURL(t *testing.T) {
	tests := []struct{ in, want, wantAdmin string }{
		{"http://h:1", "http://h:1/api/v1", "http://h:1"},
		{"http://h:1/", "http://h:1/api/v1", "http://h:1"},
		{"http://h:1/api/v1/", "http://h:1/api/v1", "http://h:1"},
		{"https://h/prefix/api/v1", "https://h/prefix/api/v1", "https://h/prefix"},
	}
	for _, tc := range tests {
		c, err := New(tc.in, "k")
		if err != nil || c.BaseURL() != tc.want {
			t.Errorf("New(%q) base %v %v, want %s", tc.in, c, err, tc.want)
		}
		a, err := NewAdmin(tc.in, "t")
		if err != nil || a.c.base != tc.wantAdmin {
			t.Errorf("NewAdmin(%q) base %v, want %s", tc.in, err, tc.wantAdmin)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:8080", "ftp://h", "http://"} {
		if _, err := New(bad, "k"); !errors.Is(err, ErrBadURL) {
			t.Errorf("New(%q) err %v, want ErrBadURL", bad, err)
		}
	}
}

func TestExportStreams(t *testing.T) {
	lines := []string{
		`{"atom_id":"a1","content":"one","atom_type":"episode","supersedes":[],"superseded_by":null}`,
		`{"atom_id":"a2","content":"two","atom_type":"secret","supersedes":[],"superseded_by":null}`,
		`{"atom_id":"a3","content":"three","atom_type":"episode","supersedes":["a1"],"superseded_by":null}`,
	}
	full := strings.Join(lines, "\n") + "\n"
	tests := []struct {
		name    string
		body    string
		stopAt  int // break the iterator after this many lines (0: never)
		want    []string
		wantErr bool
	}{
		{"whole export", full, 0, []string{"a1", "a2", "a3"}, false},
		{"caller stops early", full, 2, []string{"a1", "a2"}, false},
		{"a cut line is an error", full[:len(full)-20], 0, []string{"a1", "a2"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{script: func(n int, w http.ResponseWriter) {
				w.Header().Set("Content-Type", "application/x-ndjson")
				_, _ = io.WriteString(w, tc.body)
			}}
			c, _ := newTestClient(t, f)
			var got []string
			var gotErr error
			for l, err := range c.ExportLines(context.Background()) {
				if err != nil {
					gotErr = err
					break
				}
				got = append(got, l.Atom.AtomID)
				if string(l.Raw) != lines[len(got)-1] {
					t.Fatalf("raw line %q", l.Raw)
				}
				if len(got) == tc.stopAt {
					break
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") || (gotErr != nil) != tc.wantErr {
				t.Fatalf("got %v, err %v", got, gotErr)
			}
			if a := f.call(0).header.Get("Accept"); a != "application/x-ndjson" {
				t.Fatalf("Accept %q", a)
			}
		})
	}
	t.Run("ExportTo counts atoms and bytes", func(t *testing.T) {
		f := &fake{script: func(n int, w http.ResponseWriter) { _, _ = io.WriteString(w, full) }}
		c, _ := newTestClient(t, f)
		var sb strings.Builder
		atoms, n, err := c.ExportTo(context.Background(), &sb)
		if err != nil || atoms != 3 || n != int64(len(full)) || sb.String() != full {
			t.Fatalf("ExportTo = %d, %d, %v", atoms, n, err)
		}
	})
}

// An export cut inside a line is a transport error carrying the cause, not
// a decode error; a caller that stops early does not wait for the rest.
func TestExportCutAndStopped(t *testing.T) {
	line := `{"atom_id":"a1","content":"one","atom_type":"episode","supersedes":[],"superseded_by":null}`
	stall := make(chan struct{})
	f := &fake{script: func(n int, w http.ResponseWriter) {
		_, _ = io.WriteString(w, line+"\n"+line[:40])
		w.(http.Flusher).Flush()
		select {
		case <-stall:
		case <-time.After(20 * time.Second):
		}
	}}
	c, _ := newTestClient(t, f, WithRetry(RetryPolicy{MaxAttempts: 1}))
	t.Cleanup(func() { close(stall) }) // before the server's Close, which waits for its handlers
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := c.Export(ctx, func(*ExportLine) error { return nil })
	var te *TransportError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("export cut by the deadline: %v", err)
	}
	began := time.Now()
	for _, err := range c.ExportLines(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	if d := time.Since(began); d > 10*time.Second { // a hang guard: the stall lasts 20 s
		t.Errorf("stopping early waited %v for the stalled stream", d)
	}
	f2 := &fake{script: func(n int, w http.ResponseWriter) { _, _ = io.WriteString(w, line+"\n"+line[:40]) }}
	c2, _ := newTestClient(t, f2, WithRetry(RetryPolicy{MaxAttempts: 1}))
	if err := c2.Export(context.Background(), func(*ExportLine) error { return nil }); !errors.As(err, &te) ||
		!errors.Is(err, errCutMidLine) {
		t.Errorf("a stream that ends inside a line: %v", err)
	}
}

// The default client does not follow a redirect to another host: the API
// key header would go along.
func TestRedirectToAnotherHostRefused(t *testing.T) {
	leaked := make(chan string, 1)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked <- r.Header.Get("X-Api-Key")
	}))
	t.Cleanup(evil.Close)
	other := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other+"/x", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(good.Close)
	c, err := New(good.URL, "mk_live_SECRETKEY", WithHTTPClient(nil), WithRetry(RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stats(context.Background()); err == nil {
		t.Error("the redirect was followed")
	}
	select {
	case k := <-leaked:
		t.Errorf("the other host got the key %q", k)
	default:
	}
}

// A write is repeated after a retryable answer only when the answer says
// nothing was applied: the 503 "no leader answered in time" may follow a
// committed write, and repeating it stored a duplicate (refused by the
// gate, so the caller heard "not stored") or applied feedback twice.
func TestWriteRetriedOnlyWhenNotApplied(t *testing.T) {
	for _, tc := range []struct {
		reason    string
		wantCalls int
		status    int
		code      string
	}{
		{"", 1, 503, CodeInternal}, // no leader answered in time
		{"storage_unavailable", 2, 503, CodeInternal},
		{"starting", 2, 503, CodeInternal},
		{"embedder_timeout", 2, 503, CodeInternal},
		{"", 2, 408, CodeRequestTimeout}, // the request did not arrive whole
	} {
		t.Run(fmt.Sprintf("%d reason %s", tc.status, tc.reason), func(t *testing.T) {
			f := &fake{script: func(n int, w http.ResponseWriter) {
				if n == 0 {
					w.Header().Set("Retry-After", "1")
					envelope(w, tc.status, tc.code, true, tc.reason)
					return
				}
				okJSON(w, `{"stored":true,"atom_id":"a","importance":1,"reason":"stored","superseded":[]}`)
			}}
			c, _ := newTestClient(t, f)
			_, err := c.Write(context.Background(), WriteRequest{Content: "x"})
			if f.count() != tc.wantCalls {
				t.Fatalf("calls = %d, want %d (err %v)", f.count(), tc.wantCalls, err)
			}
			if tc.wantCalls == 1 && !errors.Is(err, ErrUnavailable) || tc.wantCalls == 2 && err != nil {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// Failures a retry cannot mend are returned at once: a 2xx answer that
// does not decode (each try counted against the daily quota), a key that
// cannot be sent, text that is not UTF-8 (sent as U+FFFD and stored so).
func TestPermanentFailuresNotRetried(t *testing.T) {
	f := &fake{script: func(n int, w http.ResponseWriter) {
		okJSON(w, `{"items":[{"created_at":"not a time"}]}`)
	}}
	c, _ := newTestClient(t, f)
	_, err := c.Read(context.Background(), ReadRequest{Query: "q"})
	var te *TransportError
	if !errors.As(err, &te) || f.count() != 1 {
		t.Fatalf("undecodable answer: err %v after %d calls, want a TransportError after 1", err, f.count())
	}

	if _, err := New("http://127.0.0.1:1", "mk_live_k\n"); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("New with a newline in the key: %v, want ErrBadHeader", err)
	}
	if _, err := New("http://127.0.0.1:1", "k", nil); err != nil {
		t.Fatalf("New with a nil option: %v", err)
	}

	_, err = c.Write(context.Background(), WriteRequest{Content: "ok \xff\xfe bytes"})
	if !errors.Is(err, ErrNotUTF8) || f.count() != 1 {
		t.Fatalf("invalid UTF-8: err %v, %d calls; want ErrNotUTF8 and nothing sent", err, f.count())
	}
	_, err = c.Write(context.Background(), WriteRequest{Content: "x", Metadata: json.RawMessage("{\"k\":\"\xff\"}")})
	if !errors.Is(err, ErrNotUTF8) {
		t.Fatalf("invalid UTF-8 in raw metadata: %v", err)
	}
}

// base64Bytes encodes itself: its bytes need not be UTF-8.
type base64Bytes []byte

func (b base64Bytes) MarshalJSON() ([]byte, error) {
	return json.Marshal(base64.StdEncoding.EncodeToString(b))
}

// The UTF-8 check walks what is encoded: a cycle is an error (it overflowed
// the stack), and a field tagged "-" or a value encoding itself is not text
// the check may refuse.
func TestEncodeBodyWalksWhatIsEncoded(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	if _, err := encodeBody(WriteRequest{Content: "x", Metadata: cyclic}); err == nil || errors.Is(err, ErrNotUTF8) {
		t.Errorf("cyclic metadata: %v, want the encoder's error", err)
	}
	type tagged struct {
		Note   string `json:"note"`
		Hidden string `json:"-"`
	}
	for name, v := range map[string]any{
		"field tagged -":           tagged{Note: "ok", Hidden: "\xff"},
		"value encoding itself":    map[string]any{"blob": base64Bytes("\xff\xfe")},
		"raw JSON in an interface": map[string]any{"raw": json.RawMessage(`"ok"`)},
	} {
		if _, err := encodeBody(WriteRequest{Content: "x", Metadata: v}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, v := range map[string]any{
		"text in a map":       map[string]any{"k": "\xff"},
		"raw JSON in a map":   map[string]any{"raw": json.RawMessage("\"\xff\"")},
		"self-encoding bytes": map[string]any{"raw": rawText("\"\xff\"")},
	} {
		if _, err := encodeBody(WriteRequest{Content: "x", Metadata: v}); !errors.Is(err, ErrNotUTF8) {
			t.Errorf("%s: %v, want ErrNotUTF8", name, err)
		}
	}
}

// rawText encodes itself as the JSON it holds.
type rawText string

func (r rawText) MarshalJSON() ([]byte, error) { return []byte(r), nil }

func TestRetryAfterAndUncappedBackoff(t *testing.T) {
	now := time.Now()
	for v, want := range map[string]time.Duration{
		"2": 2 * time.Second, "10000000000": maxRetryAfter, "99999999999999999999": maxRetryAfter, "-3": 0,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("Retry-After %s: %v, want %v", v, got, want)
		}
	}
	p := RetryPolicy{MaxAttempts: 6, BaseDelay: 100 * time.Millisecond}
	if got := p.backoff(3, 0.999); got < 400*time.Millisecond {
		t.Errorf("uncapped backoff(3) = %v, want it doubled thrice (>= 400ms)", got)
	}
	if got := p.backoff(1000, 0); got <= 0 || got > maxBackoff {
		t.Errorf("uncapped backoff(1000) = %v", got)
	}
}
