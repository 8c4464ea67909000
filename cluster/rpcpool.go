package cluster

import (
	"bufio"
	"encoding/gob"
	"errors"
	"net"
	"os"
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
	opReadIndex: true, opApplied: true, opLeader: true, opConfig: true, opSelf: true,
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

// aliveWait is how long alive's portable check first waits for an answer
// it does not expect; aliveWaitMax bounds its retries.
const (
	aliveWait    = time.Millisecond
	aliveWaitMax = 64 * time.Millisecond
)

// alive reports whether the other side has not closed the idle connection
// (and sent nothing on it). Where the descriptor can be reached it peeks
// without blocking (connAlive); otherwise a read must time out (timedAlive).
func (rc *rpcConn) alive() bool {
	if alive, ok := connAlive(rc.conn); ok {
		return alive
	}
	return timedAlive(rc.conn)
}

// timedAlive reads with a short deadline: a closed connection answers at
// once, an open idle one times out. A read whose deadline has passed before
// it starts returns without looking, which happens when the goroutine is
// descheduled between setting the deadline and reading; a timeout that came
// well after its deadline may be that, so it is tried again with a longer
// wait, up to aliveWaitMax.
func timedAlive(conn net.Conn) bool {
	defer func() { _ = conn.SetReadDeadline(time.Time{}) }()
	var b [1]byte
	for wait := aliveWait; ; wait *= 8 {
		start := time.Now()
		_ = conn.SetReadDeadline(start.Add(wait))
		n, err := conn.Read(b[:])
		if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			return false
		}
		if time.Since(start) < 2*wait || wait*8 > aliveWaitMax {
			return true
		}
	}
}

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
