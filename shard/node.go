package shard

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// NodeConfig configures the process-wide part of shard: one listener and one
// data directory shared by every group the node hosts.
type NodeConfig struct {
	NodeID        string // raft ServerID of this node (same for every group it hosts)
	BindAddr      string // TCP listen address, e.g. "127.0.0.1:7000" (port 0 allowed)
	AdvertiseAddr string // address others dial; default = actual listen address
	DataDir       string // groups live in DataDir/raft/group-<id>/ (raft.db + snapshots/)
	Logger        *slog.Logger
	// ClusterKey, when set, makes every connection of the listener, both
	// ways, mutual TLS that only nodes holding the same key pass; nil
	// leaves the listener open to whoever reaches it.
	ClusterKey *ClusterKey
}

// Node hosts Raft groups and multiplexes them, and node-to-node RPC, over one
// TCP listener.
type Node struct {
	cfg  NodeConfig
	log  *slog.Logger
	ln   net.Listener
	addr nodeAddr
	rpc  atomic.Pointer[func(net.Conn)]
	wg   sync.WaitGroup // accept loop and routing goroutines

	mu          sync.Mutex
	closed      bool
	connsClosed bool
	layers      map[uint32]*streamLayer
	groups      map[uint32]*Group
	conns       map[*trackedConn]struct{}

	closeOnce sync.Once
	closeErr  error
}

// NewNode listens on cfg.BindAddr and starts accepting connections.
func NewNode(cfg NodeConfig) (*Node, error) {
	if cfg.NodeID == "" || cfg.DataDir == "" {
		return nil, errors.New("cannot create node: NodeID and DataDir are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ln, err := net.Listen("tcp", cfg.BindAddr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %q: %w", cfg.BindAddr, err)
	}
	addr, err := advertiseAddr(cfg.AdvertiseAddr, ln.Addr())
	if err != nil {
		ln.Close()
		return nil, err
	}
	n := &Node{
		cfg:    cfg,
		log:    cfg.Logger.With("node", cfg.NodeID),
		ln:     ln,
		addr:   addr,
		layers: make(map[uint32]*streamLayer),
		groups: make(map[uint32]*Group),
		conns:  make(map[*trackedConn]struct{}),
	}
	n.wg.Add(1)
	go n.acceptLoop()
	return n, nil
}

// advertiseAddr returns the configured advertise address, or the listen
// address when it is dialable by others.
func advertiseAddr(configured string, listen net.Addr) (nodeAddr, error) {
	if configured != "" {
		if _, _, err := net.SplitHostPort(configured); err != nil {
			return "", fmt.Errorf("cannot use advertise address %q: %w", configured, err)
		}
		return nodeAddr(configured), nil
	}
	tcp, ok := listen.(*net.TCPAddr)
	if !ok || tcp.IP == nil || tcp.IP.IsUnspecified() {
		return "", fmt.Errorf("cannot advertise listen address %s: set AdvertiseAddr", listen)
	}
	return nodeAddr(tcp.String()), nil
}

// Addr is the advertised address: the raft ServerAddress of this node in
// every group.
func (n *Node) Addr() string { return string(n.addr) }

// ClusterKey is the key securing the listener; nil when it is open.
func (n *Node) ClusterKey() *ClusterKey { return n.cfg.ClusterKey }

// ID is the raft ServerID of this node in every group.
func (n *Node) ID() string { return n.cfg.NodeID }

// StartGroup opens (or creates) group cfg.ID on this node and starts its raft.
func (n *Node) StartGroup(cfg GroupConfig, sm StateMachine) (*Group, error) {
	g, err := openGroup(n, cfg, sm)
	if err != nil {
		return nil, fmt.Errorf("cannot start group %d: %w", cfg.ID, err)
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		g.close()
		return nil, fmt.Errorf("cannot start group %d: %w", cfg.ID, ErrShutdown)
	}
	n.groups[cfg.ID] = g
	n.mu.Unlock()
	return g, nil
}

// StopGroup shuts group id down on this node (snapshotting it if its log has
// grown, like Close); its data stays on disk.
func (n *Node) StopGroup(id uint32) error {
	g := n.Group(id)
	if g == nil {
		return fmt.Errorf("cannot stop group %d: %w", id, ErrUnknownGroup)
	}
	return g.close()
}

// Group returns the started group id, or nil.
func (n *Node) Group(id uint32) *Group {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.groups[id]
}

// Groups returns the started groups sorted by id.
func (n *Node) Groups() []*Group {
	n.mu.Lock()
	gs := make([]*Group, 0, len(n.groups))
	for _, g := range n.groups {
		gs = append(gs, g)
	}
	n.mu.Unlock()
	slices.SortFunc(gs, func(a, b *Group) int { return cmp.Compare(a.id, b.id) })
	return gs
}

// HandleRPC registers the handler of the node-RPC stream kind. Each accepted
// RPC connection is passed to h in its own goroutine, after the mux header;
// h owns the connection. Without a handler RPC connections are closed.
func (n *Node) HandleRPC(h func(net.Conn)) {
	n.rpc.Store(&h)
}

// DialRPC opens a node-RPC connection to the node at addr. The caller owns the
// connection; Node.Close closes it at the latest.
func (n *Node) DialRPC(addr string, timeout time.Duration) (net.Conn, error) {
	return n.dial(addr, kindRPC, 0, timeout)
}

// Close stops accepting, snapshots every group whose log has grown by at
// least a quarter of its SnapshotThreshold since its last snapshot (best
// effort), shuts every raft down, closes the stores, the listener and every
// connection still open. Idempotent.
func (n *Node) Close() error {
	n.closeOnce.Do(func() { n.closeErr = n.close() })
	return n.closeErr
}

func (n *Node) close() error {
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	var errs []error
	if err := n.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		errs = append(errs, fmt.Errorf("cannot close listener: %w", err))
	}
	groups := n.Groups()
	groupErrs := make([]error, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Go(func() { groupErrs[i] = g.close() })
	}
	wg.Wait()
	n.closeConns()
	n.wg.Wait()
	return errors.Join(append(errs, groupErrs...)...)
}

// closeConns closes every tracked connection and refuses new ones.
func (n *Node) closeConns() {
	n.mu.Lock()
	n.connsClosed = true
	conns := make([]*trackedConn, 0, len(n.conns))
	for c := range n.conns {
		conns = append(conns, c)
	}
	n.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// track wraps c so that Close can find it; false (and c closed) once the node
// has closed its connections.
func (n *Node) track(c net.Conn) (*trackedConn, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.connsClosed {
		c.Close()
		return nil, false
	}
	tc := &trackedConn{Conn: c, node: n}
	n.conns[tc] = struct{}{}
	return tc, true
}

func (n *Node) untrack(c *trackedConn) {
	n.mu.Lock()
	delete(n.conns, c)
	n.mu.Unlock()
}

// registerLayer creates the stream layer of group id.
func (n *Node) registerLayer(id uint32) (*streamLayer, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, ErrShutdown
	}
	if _, ok := n.layers[id]; ok {
		return nil, ErrGroupStarted
	}
	l := newStreamLayer(n, id)
	n.layers[id] = l
	return l, nil
}

func (n *Node) removeLayer(l *streamLayer) {
	n.mu.Lock()
	if n.layers[l.group] == l {
		delete(n.layers, l.group)
	}
	n.mu.Unlock()
}

func (n *Node) layer(id uint32) *streamLayer {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.layers[id]
}

func (n *Node) removeGroup(g *Group) {
	n.mu.Lock()
	if n.groups[g.id] == g {
		delete(n.groups, g.id)
	}
	n.mu.Unlock()
}
