package shardtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// Mux header of package shard: magic "hebb", a kind byte, a group id.
const (
	muxHeaderLen = 9
	kindRaft     = 1
)

// headerWait bounds how long a proxied connection may take to show who
// dialled it.
const headerWait = 5 * time.Second

// Network is the set of proxies between the nodes of a Cluster: one per
// node, in front of its listener. It cuts links and adds latency.
type Network struct {
	mu      sync.Mutex
	cut     map[link]bool
	latency time.Duration
	conns   map[*relay]struct{}
	proxies map[string]*proxy // node id -> proxy in front of it
	closed  bool
	wg      sync.WaitGroup
}

// link is an unordered pair of node ids.
type link struct{ a, b string }

func linkOf(x, y string) link {
	if x > y {
		x, y = y, x
	}
	return link{x, y}
}

// NewNetwork returns an empty network; AddNode puts a proxy in it.
func NewNetwork() *Network {
	return &Network{cut: map[link]bool{}, conns: map[*relay]struct{}{}, proxies: map[string]*proxy{}}
}

// AddNode listens on a loopback port for node id and returns the address
// the node must advertise. Connections are forwarded to target, which may be
// set later with SetTarget (before the node is dialled).
func (n *Network) AddNode(id, target string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("cannot listen for the proxy of %s: %w", id, err)
	}
	p := &proxy{net: n, id: id, ln: ln, target: target}
	n.mu.Lock()
	n.proxies[id] = p
	n.mu.Unlock()
	n.wg.Add(1)
	go p.acceptLoop()
	return ln.Addr().String(), nil
}

// Partition cuts every link between the nodes of far and the others; the
// nodes of far still reach each other. Links already cut stay cut.
func (n *Network) Partition(far []string) {
	inFar := map[string]bool{}
	for _, id := range far {
		inFar[id] = true
	}
	n.mu.Lock()
	for x := range n.proxies {
		for y := range n.proxies {
			if inFar[x] && !inFar[y] {
				n.cut[linkOf(x, y)] = true
			}
		}
	}
	n.mu.Unlock()
	n.dropCut()
}

// Disconnect cuts the link between nodes x and y.
func (n *Network) Disconnect(x, y string) {
	n.mu.Lock()
	n.cut[linkOf(x, y)] = true
	n.mu.Unlock()
	n.dropCut()
}

// Heal restores every link.
func (n *Network) Heal() {
	n.mu.Lock()
	n.cut = map[link]bool{}
	n.mu.Unlock()
}

// SetLatency delays every chunk of bytes a proxy forwards by d (0: none).
func (n *Network) SetLatency(d time.Duration) {
	n.mu.Lock()
	n.latency = d
	n.mu.Unlock()
}

// DropNode closes every proxied connection from or to node id (a killed
// node's peers then notice at once).
func (n *Network) DropNode(id string) {
	n.mu.Lock()
	var drop []*relay
	for r := range n.conns {
		if r.from == id || r.to == id {
			drop = append(drop, r)
		}
	}
	n.mu.Unlock()
	for _, r := range drop {
		r.close()
	}
}

// Close stops every proxy and closes every connection.
func (n *Network) Close() {
	n.mu.Lock()
	n.closed = true
	proxies := make([]*proxy, 0, len(n.proxies))
	for _, p := range n.proxies {
		proxies = append(proxies, p)
	}
	relays := make([]*relay, 0, len(n.conns))
	for r := range n.conns {
		relays = append(relays, r)
	}
	n.mu.Unlock()
	for _, p := range proxies {
		_ = p.ln.Close()
	}
	for _, r := range relays {
		r.close()
	}
	n.wg.Wait()
}

func (n *Network) isCut(x, y string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return x != "" && n.cut[linkOf(x, y)]
}

func (n *Network) delay() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.latency
}

// dropCut closes the connections that cross a cut link.
func (n *Network) dropCut() {
	n.mu.Lock()
	var drop []*relay
	for r := range n.conns {
		if r.from != "" && n.cut[linkOf(r.from, r.to)] {
			drop = append(drop, r)
		}
	}
	n.mu.Unlock()
	for _, r := range drop {
		r.close()
	}
}

// register tracks r; false when the network is closed or r's link is cut.
func (n *Network) register(r *relay) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed || (r.from != "" && n.cut[linkOf(r.from, r.to)]) {
		return false
	}
	n.conns[r] = struct{}{}
	return true
}

func (n *Network) unregister(r *relay) {
	n.mu.Lock()
	delete(n.conns, r)
	n.mu.Unlock()
}

// proxy forwards the connections made to one node.
type proxy struct {
	net *Network
	id  string
	ln  net.Listener

	mu     sync.Mutex
	target string
}

// SetTarget points the proxy of node id at the node's real listener.
func (n *Network) SetTarget(id, target string) {
	n.mu.Lock()
	p := n.proxies[id]
	n.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		p.target = target
		p.mu.Unlock()
	}
}

func (p *proxy) acceptLoop() {
	defer p.net.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		p.net.wg.Add(1)
		go func() {
			defer p.net.wg.Done()
			p.serve(c)
		}()
	}
}

// serve learns who dialled, refuses a cut link, and relays.
func (p *proxy) serve(in net.Conn) {
	from, prefix, err := identify(in)
	if err != nil || p.net.isCut(from, p.id) {
		_ = in.Close()
		return
	}
	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	out, err := net.DialTimeout("tcp", target, headerWait)
	if err != nil {
		_ = in.Close()
		return
	}
	r := &relay{from: from, to: p.id, in: in, out: out}
	if !p.net.register(r) {
		r.close()
		return
	}
	defer p.net.unregister(r)
	if _, err := out.Write(prefix); err != nil {
		r.close()
		return
	}
	r.run(p.net)
}

// identify reads the mux header and, for a raft connection, the first
// request up to its RPC header, and returns the sender's node id ("" when
// unknown) and every byte read so far.
func identify(c net.Conn) (from string, prefix []byte, err error) {
	_ = c.SetReadDeadline(time.Now().Add(headerWait))
	defer func() { _ = c.SetReadDeadline(time.Time{}) }()
	var buf bytes.Buffer
	r := io.TeeReader(c, &buf)
	hdr := make([]byte, muxHeaderLen+1) // header, then the raft rpc type byte
	if _, err := io.ReadFull(r, hdr[:muxHeaderLen]); err != nil {
		return "", nil, err
	}
	if hdr[4] != kindRaft {
		return "", buf.Bytes(), nil
	}
	if _, err := io.ReadFull(r, hdr[muxHeaderLen:]); err != nil {
		return "", nil, err
	}
	// Every raft request embeds RPCHeader, whose fields msgpack encodes
	// inline: decoding any request into this struct yields the sender.
	var req struct {
		ID []byte
	}
	if err := codec.NewDecoder(r, &codec.MsgpackHandle{}).Decode(&req); err != nil {
		return "", nil, fmt.Errorf("cannot decode raft request header: %w", err)
	}
	return string(req.ID), buf.Bytes(), nil
}

// relay is one proxied connection.
type relay struct {
	from, to string // node ids; from is "" when unknown
	in, out  net.Conn
	once     sync.Once
}

func (r *relay) close() {
	r.once.Do(func() {
		_ = r.in.Close()
		_ = r.out.Close()
	})
}

// run copies both ways until either side closes.
func (r *relay) run(n *Network) {
	done := make(chan struct{}, 2)
	pump := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			k, err := src.Read(buf)
			if k > 0 {
				if d := n.delay(); d > 0 {
					time.Sleep(d)
				}
				if _, werr := dst.Write(buf[:k]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		r.close()
		done <- struct{}{}
	}
	go pump(r.out, r.in)
	go pump(r.in, r.out)
	<-done
	<-done
}
