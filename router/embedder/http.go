package embedder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hebbdb/hebb/vecmath"
)

// NameHTTP is the name that selects the HTTP embedder (--embedder http). The
// embedder itself is named "http:" + its model, so that a data dir remembers
// which model made its vectors.
const NameHTTP = "http"

// Defaults of HTTPConfig.
const (
	DefaultHTTPTimeout    = 10 * time.Second
	DefaultHTTPBatchSize  = 64
	DefaultHTTPMaxRetries = 3
	DefaultHTTPBackoff    = 100 * time.Millisecond
)

const (
	maxBackoff       = 2 * time.Second  // the longest delay backoff alone gives
	maxRetryAfter    = 30 * time.Second // a longer Retry-After is not waited for
	maxResponseBytes = 64 << 20
	maxDetailBytes   = 200 // of an error body quoted in an Error's Detail
	probeText        = "hebb embedder dimension probe"
)

// HTTPConfig configures an HTTP embedder.
type HTTPConfig struct {
	// URL is the server's base URL; requests go to URL + "/v1/embeddings".
	// A URL already ending in "/v1" or "/v1/embeddings" is taken as meant.
	URL    string
	Model  string // sent as "model"; required
	APIKey string // sent as "Authorization: Bearer <key>" when not empty

	Timeout    time.Duration // per request; 0 means DefaultHTTPTimeout
	BatchSize  int           // texts per request; <= 0 means DefaultHTTPBatchSize
	MaxRetries int           // retries after the first try; 0 means DefaultHTTPMaxRetries, < 0 none
	// Backoff is the delay before the first retry, doubled for each next one
	// (up to 2 s) and jittered; 0 means DefaultHTTPBackoff.
	Backoff time.Duration
	Client  *http.Client // nil means a client of its own
	Logger  *slog.Logger // retries are logged at Warn; nil means no logs
}

// HTTP is an embedder that calls an OpenAI-compatible POST /v1/embeddings
// (OpenAI, Ollama, vLLM, Hugging Face TEI, llama.cpp server). NewHTTP
// discovers its dimension with one call; every later vector must have that
// dimension. Texts are sent in batches; transport errors, timeouts, 429 and
// 5xx are retried with jittered exponential backoff, honouring Retry-After
// and the context's deadline. Every failure is an *Error wrapping
// ErrUnavailable. An HTTP is safe for concurrent use.
type HTTP struct {
	cfg      HTTPConfig
	endpoint string // the request URL
	shown    string // the request URL with any password redacted, for messages
	client   *http.Client
	log      *slog.Logger
	dim      int

	// Hooks, replaced by tests.
	sleep  func(ctx context.Context, d time.Duration) error
	jitter func(d time.Duration) time.Duration
}

// NewHTTP builds an HTTP embedder and embeds one probe text to learn the
// dimension. It fails when the configuration is unusable (ErrInvalidConfig)
// or the probe does (an *Error; the message names the URL).
func NewHTTP(ctx context.Context, cfg HTTPConfig) (*HTTP, error) {
	h, err := newHTTP(cfg)
	if err != nil {
		return nil, err
	}
	if err := h.probe(ctx); err != nil {
		return nil, fmt.Errorf("cannot probe the embedder at %s (model %q): %w", h.shown, cfg.Model, err)
	}
	return h, nil
}

// newHTTP validates cfg and fills its defaults; it makes no request.
func newHTTP(cfg HTTPConfig) (*HTTP, error) {
	endpoint, shown, err := embeddingsURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("cannot create the http embedder: no model: %w", ErrInvalidConfig)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultHTTPTimeout
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultHTTPBatchSize
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultHTTPMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultHTTPBackoff
	}
	h := &HTTP{cfg: cfg, endpoint: endpoint, shown: shown, client: cfg.Client, log: cfg.Logger,
		sleep: sleepContext, jitter: equalJitter}
	if h.client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 32
		h.client = &http.Client{Transport: tr}
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h, nil
}

// embeddingsURL returns the request URL for base, and the same with any
// password redacted.
func embeddingsURL(base string) (endpoint, shown string, err error) {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	if base == "" {
		return "", "", fmt.Errorf("cannot create the http embedder: no URL: %w", ErrInvalidConfig)
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("cannot create the http embedder: URL %q is not an http(s) URL: %w",
			redactURL(base), ErrInvalidConfig)
	}
	switch {
	case strings.HasSuffix(u.Path, "/v1/embeddings"):
	case strings.HasSuffix(u.Path, "/v1"):
		u.Path += "/embeddings"
	default:
		u.Path += "/v1/embeddings"
	}
	return u.String(), u.Redacted(), nil
}

func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return "(unparsable)"
}

// Name is "http:" + the model.
func (h *HTTP) Name() string { return NameHTTP + ":" + h.cfg.Model }

// Dim is the dimension the probe discovered.
func (h *HTTP) Dim() int { return h.dim }

// Embed returns one unit vector per text, in order, requesting at most
// BatchSize texts at a time. Any failure fails the whole call with an *Error.
func (h *HTTP) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += h.cfg.BatchSize {
		end := min(start+h.cfg.BatchSize, len(texts))
		vecs, err := h.embedBatch(ctx, texts[start:end])
		if err != nil {
			return nil, err
		}
		for _, v := range vecs {
			if len(v) != h.dim {
				return nil, &Error{Reason: ReasonDimensionMismatch,
					Detail: fmt.Sprintf("got a vector of dimension %d, the embedder had dimension %d", len(v), h.dim)}
			}
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// probe embeds one text and keeps its dimension.
func (h *HTTP) probe(ctx context.Context) error {
	vecs, err := h.embedBatch(ctx, []string{probeText})
	if err != nil {
		return err
	}
	h.dim = len(vecs[0])
	return nil
}

type embeddingsRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

// embedBatch sends one request, retrying what may pass on a later try.
func (h *HTTP) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingsRequest{Model: h.cfg.Model, Input: texts})
	if err != nil {
		return nil, fmt.Errorf("cannot encode the embeddings request: %w", err)
	}
	for attempt := 0; ; attempt++ {
		vecs, retryAfter, err := h.post(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		if attempt >= h.cfg.MaxRetries || !retryable(err) || retryAfter > maxRetryAfter {
			return nil, err
		}
		wait := max(h.jitter(h.backoff(attempt)), retryAfter)
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return nil, err // no time left to wait for a retry
		}
		h.log.Warn("embedder request failed, retrying", "url", h.shown, "err", err,
			"attempt", attempt+1, "wait", wait)
		if err := h.sleep(ctx, wait); err != nil {
			return nil, contextError(ctx)
		}
	}
}

// backoff is the delay before retry attempt+1, before jitter.
func (h *HTTP) backoff(attempt int) time.Duration {
	d := h.cfg.Backoff
	for i := 0; i < attempt && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// equalJitter returns a delay uniformly in [d/2, d].
func equalJitter(d time.Duration) time.Duration {
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(d-half)+1))
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryable tells whether a later try may succeed where err failed.
func retryable(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Reason {
	case ReasonTimeout, ReasonUnreachable:
		return true
	case ReasonHTTPStatus:
		return e.Status == http.StatusTooManyRequests || e.Status >= 500
	default:
		return false
	}
}

// post makes one request. On failure it returns an *Error and, for a 429 or
// 5xx, the delay the server asked for in Retry-After (0 when none).
func (h *HTTP) post(ctx context.Context, body []byte, n int) ([][]float32, time.Duration, error) {
	if ctx.Err() != nil {
		return nil, 0, contextError(ctx)
	}
	actx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, h.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, 0, &Error{Reason: ReasonUnreachable, Detail: "cannot build the request"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if h.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+h.cfg.APIKey)
	}
	res, err := h.client.Do(req)
	if err != nil {
		return nil, 0, h.transportError(ctx, actx, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxResponseBytes+1))
	if err != nil {
		return nil, 0, h.transportError(ctx, actx, err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		detail := res.Status
		if s := h.snippet(raw); s != "" {
			detail += ": " + s
		}
		return nil, retryAfter(res.Header.Get("Retry-After")),
			&Error{Reason: ReasonHTTPStatus, Status: res.StatusCode, Detail: detail}
	}
	if len(raw) > maxResponseBytes {
		return nil, 0, &Error{Reason: ReasonBadResponse, Detail: "the response is larger than 64 MiB"}
	}
	vecs, err := decodeEmbeddings(raw, n)
	if err != nil {
		return nil, 0, err
	}
	return vecs, 0, nil
}

// transportError classifies a failed exchange: the caller's deadline or
// cancellation, this request's timeout, or a network failure.
func (h *HTTP) transportError(ctx, actx context.Context, err error) error {
	if ctx.Err() != nil {
		return contextError(ctx)
	}
	if errors.Is(actx.Err(), context.DeadlineExceeded) {
		return &Error{Reason: ReasonTimeout, Detail: "no answer within " + h.cfg.Timeout.String()}
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err // without the method and URL
	}
	return &Error{Reason: ReasonUnreachable, Detail: h.redact(err.Error())}
}

func contextError(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &Error{Reason: ReasonTimeout, Detail: "the request's deadline passed"}
	}
	return &Error{Reason: ReasonCanceled, Detail: "the request was canceled"}
}

// snippet is the start of an error body, on one line, without the API key.
func (h *HTTP) snippet(raw []byte) string {
	s := strings.Join(strings.Fields(string(raw)), " ")
	if len(s) > maxDetailBytes {
		cut := maxDetailBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return h.redact(s)
}

// redact removes the API key from s, should a server or proxy echo it.
func (h *HTTP) redact(s string) string {
	if h.cfg.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, h.cfg.APIKey, "[redacted]")
}

// retryAfter parses a Retry-After header (seconds or an HTTP date); 0 when
// absent or unparsable.
func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, 24*3600)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

type embeddingsResponse struct {
	Data []struct {
		Embedding []float32 `json:"embedding"`
		Index     *int      `json:"index"`
	} `json:"data"`
}

// decodeEmbeddings parses an OpenAI embeddings response for n inputs and
// returns the vectors in input order (by "index"; by position when it is
// absent), each L2-normalised.
func decodeEmbeddings(raw []byte, n int) ([][]float32, error) {
	var resp embeddingsResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, &Error{Reason: ReasonBadResponse, Detail: "cannot decode the response: " + err.Error()}
	}
	if len(resp.Data) != n {
		return nil, &Error{Reason: ReasonBadResponse,
			Detail: fmt.Sprintf("got %d embeddings for %d texts", len(resp.Data), n)}
	}
	out := make([][]float32, n)
	for pos, d := range resp.Data {
		i := pos
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= n || out[i] != nil {
			return nil, &Error{Reason: ReasonBadResponse,
				Detail: fmt.Sprintf("embedding index %d is out of range or repeated", i)}
		}
		if len(d.Embedding) == 0 {
			return nil, &Error{Reason: ReasonBadResponse, Detail: fmt.Sprintf("embedding %d is empty", i)}
		}
		if vecmath.Normalize(d.Embedding) == 0 {
			return nil, &Error{Reason: ReasonBadResponse,
				Detail: fmt.Sprintf("embedding %d is a zero or non-finite vector", i)}
		}
		out[i] = d.Embedding
	}
	for i, v := range out {
		if len(v) != len(out[0]) {
			return nil, &Error{Reason: ReasonDimensionMismatch,
				Detail: fmt.Sprintf("embedding %d has dimension %d, embedding 0 has %d", i, len(v), len(out[0]))}
		}
	}
	return out, nil
}
