package bench

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestNewAPI(t *testing.T) {
	tests := []struct {
		in, base, admin, health string
		bad                     bool
	}{
		{in: "http://h:1", base: "http://h:1/api/v1", admin: "http://h:1/admin/v1/orgs", health: "http://h:1/health"},
		{in: "http://h:1/", base: "http://h:1/api/v1", admin: "http://h:1/admin/v1/orgs", health: "http://h:1/health"},
		{in: "http://h:1/api/v1/", base: "http://h:1/api/v1", admin: "http://h:1/admin/v1/orgs", health: "http://h:1/health"},
		{in: "https://h/x/api/v1", base: "https://h/x/api/v1", admin: "https://h/admin/v1/orgs", health: "https://h/health"},
		{in: "h:1", bad: true},
		{in: "ftp://h/", bad: true},
		{in: "", bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			a, err := NewAPI(tc.in, "", 1, 0)
			if tc.bad {
				if !errors.Is(err, ErrBadConfig) {
					t.Errorf("err = %v, want ErrBadConfig", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Base() != tc.base || a.url("/admin/v1/orgs") != tc.admin || a.url("/health") != tc.health {
				t.Errorf("base %s admin %s health %s", a.Base(), a.url("/admin/v1/orgs"), a.url("/health"))
			}
			if got := a.url("/memory/read"); got != tc.base+"/memory/read" {
				t.Errorf("memory url %s", got)
			}
		})
	}
}

func TestErrorKey(t *testing.T) {
	f := func(status int, err error, want string) {
		t.Helper()
		if got := ErrorKey(status, err); got != want {
			t.Errorf("ErrorKey(%d, %v) = %q, want %q", status, err, got, want)
		}
	}
	f(200, nil, "")
	f(204, nil, "")
	f(404, nil, "404")
	f(503, nil, "503")
	f(0, fasthttp.ErrTimeout, "timeout")
	f(0, fmt.Errorf("dial: %w", syscall.ECONNREFUSED), "conn_refused")
	f(0, fasthttp.ErrNoFreeConns, "no_free_conns")
	f(0, fasthttp.ErrConnectionClosed, "conn_closed")
	f(0, errors.New("boom"), "transport")
}
