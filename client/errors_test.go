package client

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestDecodeError(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		header     http.Header
		body       string
		want       APIError
		sentinel   error
		notMatched error
	}{
		{
			name:   "validation with field errors",
			status: 400,
			body: `{"code":"VALIDATION_ERROR","message":"Request validation failed","requestId":"req_1","retryable":false,` +
				`"details":{"errors":[{"loc":["body","items",3,"external_ref"],"msg":"bad ref","type":"value_error"}]}}`,
			want: APIError{StatusCode: 400, Code: CodeValidation, Message: "Request validation failed", RequestID: "req_1",
				Errors: []FieldError{{Loc: []any{"body", "items", 3.0, "external_ref"}, Msg: "bad ref", Type: "value_error"}}},
			sentinel: ErrValidation, notMatched: ErrNotFound,
		},
		{
			name:     "unauthorized with reason and null request id",
			status:   401,
			body:     `{"code":"UNAUTHORIZED","message":"API key is not valid","requestId":null,"retryable":false,"details":{"reason":"invalid_key","keys_url":"http://x/console/keys"}}`,
			want:     APIError{StatusCode: 401, Code: CodeUnauthorized, Message: "API key is not valid", Reason: "invalid_key"},
			sentinel: ErrUnauthorized, notMatched: ErrForbidden,
		},
		{
			name:     "rate limited with Retry-After",
			status:   429,
			header:   http.Header{"Retry-After": {"7"}},
			body:     `{"code":"RATE_LIMITED","message":"Daily query quota exhausted","requestId":"r","retryable":true,"details":{"reason":"daily_query_quota"}}`,
			want:     APIError{StatusCode: 429, Code: CodeRateLimited, Message: "Daily query quota exhausted", RequestID: "r", Retryable: true, Reason: "daily_query_quota", RetryAfter: 7 * time.Second},
			sentinel: ErrRateLimited, notMatched: ErrUnavailable,
		},
		{
			name:     "unavailable with null details",
			status:   503,
			body:     `{"code":"INTERNAL","message":"Service unavailable","requestId":"r","retryable":true,"details":null}`,
			want:     APIError{StatusCode: 503, Code: CodeInternal, Message: "Service unavailable", RequestID: "r", Retryable: true},
			sentinel: ErrUnavailable, notMatched: ErrConflict,
		},
		{
			name:     "a proxy's bare 404 with a request id header",
			status:   404,
			header:   http.Header{"X-Request-Id": {"req_hdr"}},
			body:     ``,
			want:     APIError{StatusCode: 404, Message: "Not Found", RequestID: "req_hdr"},
			sentinel: ErrNotFound, notMatched: ErrUnauthorized,
		},
		{
			name:     "malformed details.errors keeps the reason",
			status:   400,
			body:     `{"code":"VALIDATION_ERROR","message":"m","requestId":"r","retryable":false,"details":{"reason":"x","errors":"oops"}}`,
			want:     APIError{StatusCode: 400, Code: CodeValidation, Message: "m", RequestID: "r", Reason: "x"},
			sentinel: ErrValidation, notMatched: ErrNotFound,
		},
		{
			name:     "not an envelope",
			status:   502,
			body:     `<html>bad gateway</html>`,
			want:     APIError{StatusCode: 502, Message: "Bad Gateway: <html>bad gateway</html>"},
			sentinel: nil, notMatched: ErrInternal,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.header
			if h == nil {
				h = http.Header{}
			}
			got := decodeError("POST", "/memory/x", tc.status, h, []byte(tc.body))
			if got.StatusCode != tc.want.StatusCode || got.Code != tc.want.Code || got.Message != tc.want.Message ||
				got.RequestID != tc.want.RequestID || got.Retryable != tc.want.Retryable || got.Reason != tc.want.Reason ||
				got.RetryAfter != tc.want.RetryAfter {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
			if fmt.Sprint(got.Errors) != fmt.Sprint(tc.want.Errors) {
				t.Fatalf("errors: got %v, want %v", got.Errors, tc.want.Errors)
			}
			var err error = fmt.Errorf("wrapped: %w", got)
			if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
				t.Errorf("errors.Is(%v) = false", tc.sentinel)
			}
			if errors.Is(err, tc.notMatched) {
				t.Errorf("errors.Is(%v) = true", tc.notMatched)
			}
			if AsAPIError(err) != got || ReasonOf(err) != tc.want.Reason {
				t.Errorf("AsAPIError/ReasonOf do not find the error")
			}
		})
	}
}

func TestAPIErrorRawDetails(t *testing.T) {
	body := `{"code":"CONFLICT","message":"has a successor","requestId":"r","retryable":false,"details":{"successor":"abc"}}`
	e := decodeError("POST", "/memory/write", 409, http.Header{}, []byte(body))
	var d struct {
		Successor string `json:"successor"`
	}
	if err := e.DetailsInto(&d); err != nil || d.Successor != "abc" {
		t.Fatalf("DetailsInto: %v %+v", err, d)
	}
	want := "client: POST /memory/write: 409 CONFLICT: has a successor [r]"
	if e.Error() != want {
		t.Fatalf("Error() = %q, want %q", e.Error(), want)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f := func(in string, want time.Duration) {
		t.Helper()
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
	f("", 0)
	f("3", 3*time.Second)
	f(" 120 ", 2*time.Minute)
	f("-1", 0)
	f("soon", 0)
	f(now.Add(90*time.Second).Format(http.TimeFormat), 90*time.Second)
	f(now.Add(-time.Hour).Format(http.TimeFormat), 0)
}

// FuzzDecodeError: any answer body decodes to an error without panicking,
// and the status is always kept.
func FuzzDecodeError(f *testing.F) {
	f.Add(400, `{"code":"VALIDATION_ERROR","message":"m","requestId":null,"retryable":false,"details":{"errors":[{"loc":["body",1],"msg":"x","type":"t"}]}}`, "3")
	f.Add(503, `{"code":"INTERNAL","details":{"reason":5}}`, "Wed, 21 Oct 2015 07:28:00 GMT")
	f.Add(502, `<html>`, "")
	f.Fuzz(func(t *testing.T, status int, body, retryAfter string) {
		e := decodeError("GET", "/x", status, http.Header{"Retry-After": {retryAfter}}, []byte(body))
		if e.StatusCode != status || e.RetryAfter < 0 {
			t.Fatalf("decoded %+v", e)
		}
		_ = e.Error()
		_ = errors.Is(e, ErrUnavailable)
	})
}
