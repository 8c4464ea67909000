package bench

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A tenant that holds atoms but not the populate texts is taken for
// populated by its count alone: the run says so.
func TestCheckStreamWarns(t *testing.T) {
	gen := NewTextGen(1)
	for _, tc := range []struct {
		name   string
		stored func(query string) string // the top hit's content for a query
		warn   bool
	}{
		{"holds the texts", func(q string) string { return q }, false},
		{"holds other texts", func(string) string { return "something else" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var body struct {
					Query string `json:"query"`
				}
				b, _ := io.ReadAll(r.Body)
				_ = json.Unmarshal(b, &body)
				out, _ := json.Marshal(map[string]any{"items": []map[string]string{{"content": tc.stored(body.Query)}}})
				_, _ = w.Write(out)
			}))
			t.Cleanup(srv.Close)
			api, err := NewAPI(srv.URL, "", 1, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			p := &populator{api: api, gen: gen, progress: &out}
			p.checkStream("k", StreamPopulate, 100)
			if got := strings.Contains(out.String(), "warning"); got != tc.warn {
				t.Errorf("warned %v, want %v: %q", got, tc.warn, out.String())
			}
		})
	}
}
