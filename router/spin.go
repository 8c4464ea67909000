package router

import (
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// idleSpin is how long a connection that has answered polls for its next
// request before its goroutine parks, when no other request is in flight.
// A client that sends its next call within it finds a running CPU: on VMs,
// waking a halted vCPU costs 0.1 ms at the median and over 1 ms at p99,
// more than a small search (README, Benchmarks).
const idleSpin = 200 * time.Microsecond

// spinListener hands out TCP connections whose reads poll briefly before
// parking (spinConn).
type spinListener struct {
	net.Listener
	inflight atomic.Int32 // connections between a request's first bytes and their next read
	spinning atomic.Bool  // one connection polls at a time
	polls    atomic.Int64 // polls begun, for tests
}

func (l *spinListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c, nil
	}
	return &spinConn{TCPConn: tc, raw: raw, l: l}, nil
}

// spinConn is a TCP connection whose Read, when no request of any
// connection is in flight, polls the socket for up to idleSpin (MSG_PEEK,
// non-blocking) before the ordinary read parks it. Only one connection
// polls at a time, it stops as soon as another request starts, and Serve
// uses none with GOMAXPROCS 1 (the poll would hold the only CPU while
// another connection's request waits for it), so the polling uses a CPU
// nothing else wants.
type spinConn struct {
	*net.TCPConn
	raw     syscall.RawConn
	l       *spinListener
	counted atomic.Bool // the connection counts in l.inflight
	closed  atomic.Bool
}

func (c *spinConn) Read(p []byte) (int, error) {
	c.settle()
	if c.l.inflight.Load() == 0 && c.l.spinning.CompareAndSwap(false, true) {
		c.poll()
		c.l.spinning.Store(false)
	}
	n, err := c.TCPConn.Read(p)
	// A Close racing this read may leave the count one high: connections
	// then stop polling, which costs latency, never correctness.
	if n > 0 && !c.closed.Load() && !c.counted.Swap(true) {
		c.l.inflight.Add(1)
	}
	return n, err
}

// settle takes the connection out of the in-flight count: a read means
// its request was answered (or is being read further).
func (c *spinConn) settle() {
	if c.counted.Swap(false) {
		c.l.inflight.Add(-1)
	}
}

// poll returns when the socket has data or an error, idleSpin has passed,
// or another request is in flight.
func (c *spinConn) poll() {
	c.l.polls.Add(1)
	end := time.Now().Add(idleSpin)
	_ = c.raw.Read(func(fd uintptr) bool {
		for !readable(fd) && c.l.inflight.Load() == 0 && time.Now().Before(end) {
		}
		return true
	})
}

func (c *spinConn) Close() error {
	c.closed.Store(true)
	c.settle()
	return c.TCPConn.Close()
}
