package shard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
)

// Stream kinds carried by the node listener.
const (
	kindRaft byte = 1 // a raft transport connection of one group
	kindRPC  byte = 2 // a node-to-node RPC connection (request forwarding)
)

// headerLen is the size of the mux header: magic, kind, group id.
const headerLen = 9

var muxMagic = [4]byte{'h', 'e', 'b', 'b'}

// headerTimeout bounds how long an inbound connection may take to send its
// mux header. A variable so tests can shorten it.
var headerTimeout = 5 * time.Second

var errBadHeader = errors.New("shard: bad mux header")

func encodeHeader(kind byte, group uint32) []byte {
	b := make([]byte, headerLen)
	copy(b, muxMagic[:])
	b[4] = kind
	binary.BigEndian.PutUint32(b[5:], group)
	return b
}

func decodeHeader(b []byte) (kind byte, group uint32, err error) {
	if len(b) != headerLen || [4]byte(b[:4]) != muxMagic {
		return 0, 0, errBadHeader
	}
	kind = b[4]
	if kind != kindRaft && kind != kindRPC {
		return 0, 0, fmt.Errorf("%w: unknown kind %d", errBadHeader, kind)
	}
	return kind, binary.BigEndian.Uint32(b[5:]), nil
}

func readHeader(c net.Conn) (kind byte, group uint32, err error) {
	if err := c.SetReadDeadline(time.Now().Add(headerTimeout)); err != nil {
		return 0, 0, err
	}
	b := make([]byte, headerLen)
	if _, err := io.ReadFull(c, b); err != nil {
		return 0, 0, fmt.Errorf("cannot read mux header: %w", err)
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		return 0, 0, err
	}
	return decodeHeader(b)
}

// acceptLoop accepts connections until the listener is closed and routes each
// one in its own goroutine.
func (n *Node) acceptLoop() {
	defer n.wg.Done()
	var delay time.Duration
	for {
		c, err := n.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			n.log.Warn("cannot accept connection", "err", err, "retry_in", delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		tc, ok := n.track(c)
		if !ok {
			return
		}
		n.wg.Add(1)
		go n.route(tc)
	}
}

// route reads the mux header of an inbound connection and hands the
// connection to its group's transport or to the RPC handler; anything else is
// closed.
func (n *Node) route(raw *trackedConn) {
	defer n.wg.Done()
	c := net.Conn(raw)
	if k := n.cfg.ClusterKey; k != nil {
		var err error
		if c, err = k.serverTLS(raw); err != nil {
			n.refused(raw, err)
			raw.Close()
			return
		}
	}
	kind, group, err := readHeader(c)
	if err != nil {
		n.log.Debug("rejecting connection", "remote", c.RemoteAddr().String(), "err", err)
		c.Close()
		return
	}
	switch kind {
	case kindRaft:
		if l := n.layer(group); l != nil && l.deliver(c) {
			return
		}
		n.log.Debug("closing connection for a group not started", "group", group, "remote", c.RemoteAddr().String())
	case kindRPC:
		if h := n.rpc.Load(); h != nil {
			go (*h)(c)
			return
		}
		n.log.Debug("closing RPC connection: no handler", "remote", c.RemoteAddr().String())
	}
	c.Close()
}

// dial opens a connection to another node (under TLS with a cluster key)
// and writes the mux header.
func (n *Node) dial(addr string, kind byte, group uint32, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	raw, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot dial %s: %w", addr, err)
	}
	tc, ok := n.track(raw)
	if !ok {
		return nil, fmt.Errorf("cannot dial %s: %w", addr, ErrShutdown)
	}
	c := net.Conn(tc)
	if k := n.cfg.ClusterKey; k != nil {
		if c, err = k.clientTLS(tc, timeout); err != nil {
			tc.Close()
			return nil, err
		}
	}
	if timeout > 0 {
		_ = c.SetWriteDeadline(time.Now().Add(timeout))
	}
	if _, err := c.Write(encodeHeader(kind, group)); err != nil {
		c.Close()
		return nil, fmt.Errorf("cannot write mux header to %s: %w", addr, err)
	}
	_ = c.SetWriteDeadline(time.Time{})
	return c, nil
}

// refused logs an inbound connection that did not prove the cluster key:
// a node started without it or with another, or a stranger. At most one
// line per remote host every peerLineEvery.
func (n *Node) refused(c net.Conn, err error) {
	host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
	if ok, left := refusedLines.allow(host, time.Now()); ok {
		n.log.Warn("refused a node connection without the cluster key", "remote", c.RemoteAddr().String(),
			"err", err, "repeats_not_logged", left)
	}
}

var refusedLines = &lineThrottle{every: peerLineEvery, seen: map[string]*throttled{}}

// trackedConn removes itself from its node's connection set when closed, so
// that Node.Close can close every connection still open.
type trackedConn struct {
	net.Conn
	node *Node
	once sync.Once
}

// SyscallConn reaches the connection's descriptor (the cluster's
// connection pool peeks at idle connections through it).
func (c *trackedConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.New("shard: the connection has no descriptor")
}

func (c *trackedConn) Close() error {
	err := net.ErrClosed
	c.once.Do(func() {
		c.node.untrack(c)
		err = c.Conn.Close()
	})
	return err
}

// nodeAddr is the advertised address of a node as a net.Addr.
type nodeAddr string

func (a nodeAddr) Network() string { return "tcp" }
func (a nodeAddr) String() string  { return string(a) }

// streamLayer is the raft.StreamLayer of one group: Accept yields the
// connections the node routed to the group, Dial opens connections to the
// same group on another node.
type streamLayer struct {
	node  *Node
	group uint32
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

var _ raft.StreamLayer = (*streamLayer)(nil)

func newStreamLayer(n *Node, group uint32) *streamLayer {
	return &streamLayer{node: n, group: group, conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *streamLayer) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// deliver hands c to the group's transport; false when the layer is closed.
func (l *streamLayer) deliver(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *streamLayer) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.node.removeLayer(l)
	})
	return nil
}

func (l *streamLayer) Addr() net.Addr { return l.node.addr }

func (l *streamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return l.node.dial(string(address), kindRaft, l.group, timeout)
}
