package chat

import (
	"context"
	"errors"
	"hash/fnv"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/router/relay"
)

// hostingBackend holds the tenants for which hosts says so; forwarding is
// never reached in these tests.
type hostingBackend struct {
	Backend
	hosts func(tenant string) bool
}

func (b hostingBackend) Hosts(tenant string) bool { return b.hosts(tenant) }

func (hostingBackend) ForwardHTTP(context.Context, string, []byte) ([]byte, error) {
	return nil, errors.New("not in this test")
}

// oneIn8 holds about one tenant in eight, as a node holding one of eight
// groups does.
func oneIn8(tenant string) bool {
	h := fnv.New32a()
	h.Write([]byte(tenant))
	return h.Sum32()%8 == 0
}

func TestNewRoomID(t *testing.T) {
	newCall := func(forwarded bool) *call {
		c := &call{ctx: &fasthttp.RequestCtx{}}
		if forwarded {
			relay.MarkRelayed(c.ctx) // as relay.Serve marks it
		}
		return c
	}
	t.Run("a held group", func(t *testing.T) {
		// 50 rooms: a node holding one group in eight finds none in its 64
		// draws once in 5,000 rooms (then it forwards, which is right), so
		// a test asking for every one failed about one run in a hundred.
		// About one in four: once in 25 million rooms.
		oneIn4 := func(id string) bool { return oneIn8(id) || oneIn8(id+"#") }
		s := &Server{b: hostingBackend{hosts: oneIn4}}
		for range 50 {
			id, fw, here := s.newRoomID(newCall(false))
			if !here || fw != nil || !validID(roomPrefix, id) || !oneIn4(id) {
				t.Fatalf("newRoomID = %q, %v, %v; want a valid ID this node holds", id, fw, here)
			}
		}
	})
	t.Run("no group held", func(t *testing.T) {
		s := &Server{b: hostingBackend{hosts: func(string) bool { return false }}}
		id, fw, here := s.newRoomID(newCall(false))
		if here || fw == nil || !validID(roomPrefix, id) {
			t.Fatalf("newRoomID = %q, %v, %v; want a valid ID to forward by", id, fw, here)
		}
		// A forwarded request is never forwarded again.
		if _, fw, here := s.newRoomID(newCall(true)); !here || fw != nil {
			t.Fatalf("forwarded request: newRoomID = %v, %v; want it answered here", fw, here)
		}
	})
	t.Run("no forwarder", func(t *testing.T) {
		s := &Server{}
		if id, fw, here := s.newRoomID(newCall(false)); !here || fw != nil || !validID(roomPrefix, id) {
			t.Fatalf("newRoomID = %q, %v, %v", id, fw, here)
		}
	})
}

func TestForwardedSurface(t *testing.T) {
	chat := []byte("GET /api/rooms/x HTTP/1.1\r\nHost: a\r\nX-Hebb-Surface: chat\r\n\r\n")
	rest := []byte("POST /api/v1/memory/read HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}")
	if !Forwarded(chat) || Forwarded(rest) || Forwarded([]byte("garbage")) {
		t.Fatalf("Forwarded: chat %v, rest %v, garbage %v", Forwarded(chat), Forwarded(rest), Forwarded([]byte("garbage")))
	}
}
