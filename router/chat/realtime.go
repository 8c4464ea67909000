package chat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/raftfsm"
)

// The realtime channel: GET /parties/chat/{roomId}?token=<partykit
// token>[&cursor=<seq>] upgrades to a WebSocket that sends the room's
// events in commit order as JSON text frames:
//
//	{"type":"ready","roomId":…,"userId":…,"cursor":N,"head":H}  first
//	{"type":"message.created"|…,"seq":S,"roomId":…,"at":…,…}     one per event
//	{"type":"resync","roomId":…,"cursor":H}                     the events after
//	    the cursor are no longer kept: refetch over REST, go on from H
//
// Without a cursor the stream starts at the room's current head; with one
// it first replays every event after it. Close codes: 4001 the session the
// token was issued to ended (sign-out; checked before each send and at
// each idle ping), 4003 the
// user left or was removed, 4004 the room was deleted, 1001 the server is
// stopping,
// 1013 the room cannot be followed from this node for now (reconnect),
// 1008 the user holds maxRealtimePerUser connections on this node already
// (normally answered before the upgrade: 429 too_many_connections).
//
// Any node serves any room: one without a replica of the room's group
// follows it by long polling the group's leader (feed.go).
const (
	realtimePath     = "/parties/chat/"
	realtimeBatch    = 100
	realtimeIdle     = 20 * time.Second // ping and re-pick the source after this long without events
	realtimeWriteMax = 10 * time.Second
	closeSignedOut   = 4001
	closeRemoved     = 4003
	closeRoomDeleted = 4004
	realtimeRetry    = 5 * time.Second // Retry-After of a connection over the user's limit
)

var upgrader = websocket.FastHTTPUpgrader{
	ReadBufferSize:  1024,
	WriteBufferSize: 4096,
	// The token in the URL is the credential (no cookies), so a page on
	// any origin may connect.
	CheckOrigin: func(*fasthttp.RequestCtx) bool { return true },
}

// realtimeURL is the WebSocket URL of a room's channel.
func (s *Server) realtimeURL(room string) string {
	base := s.cfg.PublicURL
	if rest, ok := strings.CutPrefix(base, "https://"); ok {
		base = "wss://" + rest
	} else if rest, ok := strings.CutPrefix(base, "http://"); ok {
		base = "ws://" + rest
	}
	return base + realtimePath + room
}

func (s *Server) realtime(ctx *fasthttp.RequestCtx) {
	s.public(func(c *call) error {
		room := roomParam(c)
		raw := string(ctx.QueryArgs().Peek("token"))
		if raw == "" {
			return unauthorized("missing_token", "Realtime token required")
		}
		claims, err := s.verifyRealtime(raw, c.now)
		if err != nil || claims.Room != room {
			return unauthorized("invalid_token", "Realtime token is invalid, expired or for another room")
		}
		var v validator
		cursor, hasCursor := queryUint(ctx.QueryArgs(), "cursor", &v)
		if err := v.err(); err != nil {
			return err
		}
		user, ok := s.chatUser(c, claims.Sub)
		if !ok || !s.sessionLive(c, claims) {
			return unauthorized("invalid_token", "Realtime token is invalid, expired or for another room")
		}
		c.ids = append([]string{user.ID}, user.Aliases...)
		src, view, err := s.followRoom(c, room)
		if err != nil {
			return err
		}
		if hasCursor && cursor > view.Head {
			return validationError(fieldErr("value_error", "cursor is ahead of the room's last event", "query", "cursor"))
		}
		if !websocket.FastHTTPIsWebSocketUpgrade(ctx) {
			return validationError(fieldErr("value_error", "Expected a WebSocket upgrade request", "header", "Upgrade"))
		}
		start := view.Head
		if hasCursor {
			start = cursor
		}
		if s.conns.full(user.ID) {
			return rateLimited(c, "too_many_connections",
				fmt.Sprintf("At most %d realtime connections per user on this node; close one first", maxRealtimePerUser),
				realtimeRetry)
		}
		st := &stream{s: s, src: src, room: room, userID: user.ID, ids: c.ids, after: start, head: view.Head, claims: claims}
		if err := upgrader.Upgrade(ctx, st.run); err != nil {
			s.log.Debug("websocket upgrade", "err", err)
		}
		return nil
	})(ctx)
}

// sessionLive reports whether the session a realtime token was issued to
// is still signed in (after a read barrier: the token may have been issued
// through another node a moment ago).
func (s *Server) sessionLive(c *call, cl realtimeClaims) (ok bool) {
	m := s.b.Meta()
	m.Synced(c.std, func() bool { ok = m.ChatSessionLive(cl.Sub, cl.Sid, c.now); return ok })
	return ok
}

// wsConn is an open realtime connection.
type wsConn struct {
	ws     *websocket.Conn
	cancel context.CancelFunc
	once   sync.Once
}

// shutdown tells the client the server is going away and ends the stream.
func (w *wsConn) shutdown() {
	w.once.Do(func() {
		_ = w.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "server stopping"),
			time.Now().Add(time.Second))
		w.cancel()
	})
}

// retire waits for a shutdown in progress and makes later ones do
// nothing: the connection is about to be closed and handed back.
func (w *wsConn) retire() { w.once.Do(func() {}) }

// stream is one connection's position in one room.
type stream struct {
	s      *Server
	src    eventSource
	conn   *wsConn
	room   string
	userID string
	ids    []string
	after  uint64 // the last event sent
	head   uint64 // the head when the connection was accepted
	claims realtimeClaims
}

func (st *stream) run(ws *websocket.Conn) {
	ctx, cancel := context.WithCancel(context.Background())
	st.conn = &wsConn{ws: ws, cancel: cancel}
	read := make(chan struct{})
	defer func() {
		// fasthttp reuses the connection's state once this handler
		// returns: a shutdown's close frame and the reader must be done
		// with it first.
		cancel()
		st.conn.retire()
		_ = ws.Close()
		<-read
	}()
	if err := st.s.conns.add(st.conn, st.userID); err != nil {
		close(read)
		if errors.Is(err, errUserFull) {
			st.close(websocket.ClosePolicyViolation, "too many connections")
		}
		return
	}
	defer st.s.conns.remove(st.conn)
	realtimeConnections.Inc()
	defer realtimeConnections.Dec()
	ws.SetReadLimit(4096)
	go func() { // reads (and drops) client frames so pings, pongs and close are handled
		defer close(read)
		defer cancel()
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	}()
	if st.send(map[string]any{"type": "ready", "roomId": st.room, "userId": st.userID, "cursor": st.after, "head": st.head}) != nil {
		return
	}
	st.loop(ctx)
}

func (st *stream) send(v any) error {
	_ = st.conn.ws.SetWriteDeadline(time.Now().Add(realtimeWriteMax))
	return st.conn.ws.WriteJSON(v)
}

func (st *stream) close(code int, text string) {
	_ = st.conn.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text),
		time.Now().Add(time.Second))
}

// loop sends the events after st.after as they commit.
func (st *stream) loop(ctx context.Context) {
	for {
		feed, err := st.src.next(ctx, st.room, st.after)
		if err != nil {
			if ctx.Err() == nil {
				st.close(websocket.CloseTryAgainLater, "reconnect")
			}
			return
		}
		// Before anything is sent: nothing committed after a sign-out
		// reaches the signed-out session (a local read of the meta state).
		if !st.s.b.Meta().ChatSessionLive(st.claims.Sub, st.claims.Sid, time.Now()) {
			st.close(closeSignedOut, "signed out")
			return
		}
		if feed.Missed {
			if st.send(map[string]any{"type": "resync", "roomId": st.room, "cursor": feed.Head}) != nil {
				return
			}
			st.after = feed.Head
			continue
		}
		if done, err := st.sendAll(feed.Events); done || err != nil {
			return
		}
		if len(feed.Events) > 0 {
			continue
		}
		if feed.Gone {
			st.close(closeRoomDeleted, "room deleted")
			return
		}
		if !st.idle(ctx) { // the wait ran out
			return
		}
	}
}

// sendAll sends events in order; done when the stream has to end (this
// user left the room, or the room is gone).
func (st *stream) sendAll(events []raftfsm.ChatEvent) (done bool, err error) {
	r := st.s.users()
	for _, ev := range events {
		if err := st.send(r.event(st.room, ev)); err != nil {
			return true, err
		}
		realtimeEvents.Inc()
		st.after = ev.Seq
		switch {
		case ev.Kind == "participant.left" && slices.Contains(st.ids, ev.Participant.UserID):
			st.close(closeRemoved, "no longer a participant")
			return true, nil
		case ev.Kind == "room.deleted":
			st.close(closeRoomDeleted, "room deleted")
			return true, nil
		}
	}
	return false, nil
}

// idle pings the client and picks the room's source again: the room's
// group may have moved to or away from this node (a replica moved away
// stops applying).
func (st *stream) idle(ctx context.Context) bool {
	if st.conn.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(realtimeWriteMax)) != nil {
		return false
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	src, err := st.s.source(rctx, st.room)
	if err != nil {
		st.close(websocket.CloseTryAgainLater, "reconnect")
		return false
	}
	st.src = src
	return true
}
