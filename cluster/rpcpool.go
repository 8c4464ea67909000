package cluster

import (
	"bufio"
	"encoding/gob"
	"net"
	"sync"
	"time"
)

// Node RPC connections. A fresh connection costs a dial and a fresh gob
// stream each way (type descriptors sent, decoders compiled): most of a
// request's time on a LAN. So the server answers any number of requests on
// one connection, and the caller keeps a few idle ones per node. One taken
// from the pool is checked first (alive): a node that restarted or stopped
// closed it. A request that still fails on a reused connection is sent
// once more on a fresh one only when it is idempotent (the ops below):
// for the others (proposals, forwarded HTTP requests, joins, membership
// changes) it cannot be told whether the other node acted on them, as with
// a fresh connection that breaks.

// idempotent lists the ops that may be sent twice.
var idempotent = map[string]bool{
	opReadIndex: true, opApplied: true, opLeader: true, opConfig: true, opSelf: true, opSync: true,
	opRoomsOf: true, opChatRooms: true, opInRoom: true, opChatWatch: true,
}

const (
	// poolIdle is how long a pooled connection may wait for reuse; the
	// server keeps a connection open idle for serveIdle, longer, so a
	// connection taken from the pool is not one the server is closing.
	poolIdle  = 30 * time.Second
	serveIdle = 2 * time.Minute
	// poolPerNode bounds the idle connections kept per node.
	poolPerNode = 8
)

// rpcConn is a node RPC connection with its gob streams.
type rpcConn struct {
	conn  net.Conn
	w     *bufio.Writer
	enc   *gob.Encoder
	dec   *gob.Decoder
	since time.Time // when it went idle
}

func newRPCConn(conn net.Conn) *rpcConn {
	w := bufio.NewWriter(conn)
	return &rpcConn{conn: conn, w: w, enc: gob.NewEncoder(w), dec: gob.NewDecoder(conn)}
}

// alive reports whether the other side has not closed the idle connection
// (and sent nothing on it), by peeking at its socket without blocking
// (connAlive). A connection whose descriptor cannot be reached is never
// taken as alive, so it is not reused: a read with a deadline cannot tell
// (one whose deadline passed before it started, when its goroutine was
// descheduled, returns a timeout without looking), and a proposal sent on a
// connection the other node had closed fails without a retry.
func (rc *rpcConn) alive() bool { return connAlive(rc.conn) }

// send writes v as one gob message, in one write.
func (rc *rpcConn) send(v any) error {
	if err := rc.enc.Encode(v); err != nil {
		return err
	}
	return rc.w.Flush()
}

// rpcPool holds idle connections by node address.
type rpcPool struct {
	mu   sync.Mutex
	idle map[string][]*rpcConn
}

// get returns an idle connection to addr, nil when there is none; ones
// idle for poolIdle are closed.
func (p *rpcPool) get(addr string) *rpcConn {
	for {
		rc := p.pop(addr)
		if rc == nil || time.Since(rc.since) < poolIdle && rc.alive() {
			return rc
		}
		_ = rc.conn.Close()
	}
}

// pop takes the connection to addr that went idle last, nil when none.
func (p *rpcPool) pop(addr string) *rpcConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	conns := p.idle[addr]
	if len(conns) == 0 {
		return nil
	}
	p.idle[addr] = conns[:len(conns)-1]
	return conns[len(conns)-1]
}

// put keeps rc for reuse, or closes it when addr has poolPerNode already.
func (p *rpcPool) put(addr string, rc *rpcConn) {
	_ = rc.conn.SetDeadline(time.Time{})
	rc.since = time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.idle == nil {
		p.idle = map[string][]*rpcConn{}
	}
	if len(p.idle[addr]) >= poolPerNode {
		_ = rc.conn.Close()
		return
	}
	p.idle[addr] = append(p.idle[addr], rc)
}
