package linger

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// A request with both Content-Length and Transfer-Encoding is refused and
// its connection closed, whatever its chunks hold: with an empty chunked
// body (what a smuggled request follows) the guard was skipped and the
// second request served.
func TestFramedRefusesAmbiguousFraming(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: Framed(func(ctx *fasthttp.RequestCtx) {
		ctx.SetBodyString("served " + string(ctx.Path()))
	}, func(ctx *fasthttp.RequestCtx, err error) {
		ctx.SetStatusCode(400)
		ctx.SetBodyString(err.Error())
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	const second = "GET /second HTTP/1.1\r\nHost: x\r\n\r\n"
	for _, tc := range []struct {
		name    string
		req     string
		refused bool
	}{
		{"both, empty chunked body", "POST /first HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", true},
		{"both, a chunk", "POST /first HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\ncontent-length: 9\r\n\r\n3\r\nabc\r\n0\r\n\r\n", true},
		{"chunked only", "POST /first HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", false},
		{"length only", "POST /first HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.WriteString(c, tc.req+second); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(c)
			first, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(first.Body)
			if refused := first.StatusCode == 400; refused != tc.refused {
				t.Fatalf("first answer %d %s, refused want %v", first.StatusCode, body, tc.refused)
			}
			next, err := http.ReadResponse(r, nil)
			if tc.refused {
				if err == nil {
					b, _ := io.ReadAll(next.Body)
					t.Fatalf("the request after a refused one was served: %d %s", next.StatusCode, b)
				}
				return
			}
			if err != nil {
				t.Fatalf("second request: %v", err)
			}
			if b, _ := io.ReadAll(next.Body); !strings.Contains(string(b), "served /second") {
				t.Fatalf("second answer %s", b)
			}
		})
	}
}
