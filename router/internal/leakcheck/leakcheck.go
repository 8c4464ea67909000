package leakcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Buffer is an io.Writer safe for the server's goroutines and the test.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Malformed returns requests to path that the HTTP layer refuses before any
// handler runs, each carrying secret in its credentials headers and body.
func Malformed(path, secret string) map[string]string {
	body := `{"alias":"a","value":"` + secret + `"}`
	head := "POST " + path + " HTTP/1.1\r\nHost: x\r\nX-Api-Key: " + secret + "\r\nAuthorization: Bearer " + secret +
		"\r\nCookie: session=" + secret + "\r\n"
	cl := fmt.Sprintf("Content-Length: %d\r\n", len(body))
	return map[string]string{
		"control character in a header": head + cl + "X-Bad: a\x01b\r\n\r\n" + body,
		"two content lengths":           head + cl + "Content-Length: 3\r\n\r\n" + body,
		"bad content length":            head + "Content-Length: 12x\r\n\r\n" + body,
		"bad transfer encoding":         head + "Transfer-Encoding: gzip, chunked, x\r\n\r\n" + body,
		"bad chunk size":                head + "Transfer-Encoding: chunked\r\n\r\nzz\r\n" + body + "\r\n0\r\n\r\n",
		"header line without a colon":   head + cl + "NoColon " + secret + "\r\n\r\n" + body,
		"bad request line":              "POST " + path + "?" + secret + " HTTP/1.1 x\r\nHost: x\r\n" + cl + "\r\n" + body,
		// Framed by its chunks here, by its length by a proxy in front:
		// refused once read, the connection closed (RFC 9112 §6.1).
		"chunked with a content length": head + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n" +
			fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body),
	}
}

// Send writes raw on a new connection to addr and returns what the server
// answered before it closed the connection; a connection still open after
// 5 s is an error.
func Send(addr, raw string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		return "", err
	}
	out, err := io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		err = errors.New("the connection was kept open after the answer")
	}
	return string(out), err
}
