package router_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestOversizedHeadersAnswered: a client that sends its whole request
// before it reads (net/http's, curl) and whose headers pass the limit gets
// the 400 envelope, not a reset while it is still sending: the connection
// drains what the client still sends before it closes, as it does after a
// 413 (router/linger).
func TestOversizedHeadersAnswered(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	for i := range 5 {
		conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		head := "GET /api/v1/memory/stats HTTP/1.1\r\nHost: hebb\r\nX-Api-Key: " + ts.Key +
			"\r\nCookie: a=" + strings.Repeat("c", 4<<20) + "\r\n\r\n"
		if _, err := io.WriteString(conn, head); err != nil {
			t.Fatalf("attempt %d: write: %v", i, err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("attempt %d: read response: %v", i, err)
		}
		raw, err := io.ReadAll(res.Body)
		_ = res.Body.Close()
		_ = conn.Close()
		var body map[string]any
		if err != nil || res.StatusCode != 400 || json.Unmarshal(raw, &body) != nil || body["code"] != "VALIDATION_ERROR" {
			t.Fatalf("attempt %d: %d %s %v", i, res.StatusCode, raw, err)
		}
	}
}
