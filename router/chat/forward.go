package chat

import (
	"bufio"
	"bytes"
	"context"

	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/router/relay"
)

// A request forwarded to another node carries surfaceHeader with
// surfaceChat, so the receiving node's transport hands it to its chat
// surface (Forwarded) rather than to the REST API.
const (
	surfaceHeader = "X-Hebb-Surface"
	surfaceChat   = "chat"
)

// roomIDTries bounds the fresh room IDs createRoom draws looking for one
// whose group this node holds.
const roomIDTries = 64

// Forwarder is implemented by a Backend that can tell which tenants'
// groups this node holds and send a whole request to a node leading one
// (*cluster.Cluster). Without it every room is read locally.
type Forwarder interface {
	Hosts(tenant string) bool
	ForwardHTTP(ctx context.Context, tenant string, raw []byte) ([]byte, error)
}

// hosted wraps the handler of one room (its roomId parameter): on a node
// without a replica of the room's group the whole request goes to the
// group's leader, before anything is read or proposed here, and its
// answer is copied back.
func (s *Server) hosted(h func(*call) error) func(*call) error {
	return func(c *call) error {
		room := roomParam(c)
		if fw, ok := s.elsewhere(c, room); ok {
			return s.forward(c, fw, room)
		}
		return h(c)
	}
}

// elsewhere returns the forwarder when the request may be forwarded (not
// forwarded already) and room's group is held by other nodes only.
func (s *Server) elsewhere(c *call, room string) (Forwarder, bool) {
	fw, ok := s.b.(Forwarder)
	if !ok || !validID(roomPrefix, room) || relay.Relayed(c.ctx) {
		return nil, false
	}
	return fw, !fw.Hosts(room)
}

// newRoomID draws the ID of a room to create: one whose group this node
// holds, so the answer can read the room here. ok is false when the
// request should go to another node instead (this node holds none of the
// groups drawn); id then names the group to send it to.
func (s *Server) newRoomID(c *call) (id string, fw Forwarder, ok bool) {
	id = newID(roomPrefix)
	fw, remote := s.elsewhere(c, id)
	if !remote {
		return id, nil, true
	}
	for range roomIDTries - 1 {
		if next := newID(roomPrefix); fw.Hosts(next) {
			return next, nil, true
		}
	}
	return id, fw, false
}

// forward sends the request to the leader of tenant's group and copies its
// answer, headers included, into this one.
func (s *Server) forward(c *call, fw Forwarder, tenant string) error {
	return relay.Forward(c.ctx, func(req *fasthttp.Request) { req.Header.Set(surfaceHeader, surfaceChat) }, func(raw []byte) ([]byte, error) { return fw.ForwardHTTP(c.std, tenant, raw) })
}

// Forwarded reports whether raw, a request another node forwarded, is for
// the chat surface (ServeRaw) rather than the REST API.
func Forwarded(raw []byte) bool {
	var h fasthttp.RequestHeader
	if err := h.Read(bufio.NewReader(bytes.NewReader(raw))); err != nil {
		return false
	}
	return string(h.Peek(surfaceHeader)) == surfaceChat
}

// ServeRaw answers a request another node forwarded, given and returned as
// raw HTTP bytes (the node transport's HTTP operation).
func (s *Server) ServeRaw(raw []byte) []byte { return relay.Serve(raw, s.srv.Handler, nil) }
