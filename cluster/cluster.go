package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
	"github.com/hebbdb/hebb/shard"
)

// MetaGroupID is the Raft group of the meta state; data groups are 1..N.
const MetaGroupID = 0

// Config is the cluster part of `hebb serve`.
type Config struct {
	NodeID     string // empty: read from (or create) DataDir/node-id
	DataDir    string
	RaftAddr   string
	GossipAddr string
	HTTPAddr   string
	Join       []string
	Groups     int
	Replicas   int
	Embedder   string
	Dim        int
	// SnapshotThreshold overrides the groups' log-size snapshot trigger.
	SnapshotThreshold uint64
	Logger            *slog.Logger
}

// Cluster is this node's view of the cluster: the meta group and the data
// groups it hosts, with the state machines behind them.
type Cluster struct {
	cfg    Config
	log    *slog.Logger
	node   *shard.Node
	meta   *Meta
	metaG  *shard.Group
	groups []*shard.Group // index = group ID; [0] unused
	fsms   []*raftfsm.FSM // index = group ID
	info   ClusterInfo
}

// Start opens (or bootstraps) this node's groups and waits until each has a
// leader. On an existing data dir the embedder and dimension must match the
// ones the cluster was created with.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if len(cfg.Join) > 0 {
		return nil, fmt.Errorf("%w: --join (multi-node clusters) is not available in this build yet", ErrUnsupported)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create data dir: %w", err)
	}
	id, err := nodeID(cfg)
	if err != nil {
		return nil, err
	}
	cfg.NodeID = id
	node, err := shard.NewNode(shard.NodeConfig{NodeID: id, BindAddr: cfg.RaftAddr, DataDir: cfg.DataDir, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("cannot start raft node: %w", err)
	}
	c := &Cluster{cfg: cfg, log: cfg.Logger, node: node, meta: NewMeta()}
	if err := c.start(ctx); err != nil {
		_ = node.Close()
		return nil, err
	}
	collector.add(c)
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	var err error
	c.metaG, err = c.node.StartGroup(c.groupConfig(MetaGroupID), c.meta)
	if err != nil {
		return fmt.Errorf("cannot start meta group: %w", err)
	}
	if err := c.metaG.WaitLeader(ctx); err != nil {
		return fmt.Errorf("meta group has no leader: %w", err)
	}
	if err := c.metaG.ReadIndex(ctx); err != nil {
		return fmt.Errorf("cannot read meta group: %w", err)
	}
	if err := c.initInfo(ctx); err != nil {
		return err
	}
	c.groups = make([]*shard.Group, c.info.Groups+1)
	c.fsms = make([]*raftfsm.FSM, c.info.Groups+1)
	for g := 1; g <= c.info.Groups; g++ {
		c.fsms[g] = raftfsm.New(c.info.Dim)
		if c.groups[g], err = c.node.StartGroup(c.groupConfig(uint32(g)), c.fsms[g]); err != nil {
			return fmt.Errorf("cannot start group %d: %w", g, err)
		}
	}
	for g := 1; g <= c.info.Groups; g++ {
		if err := c.groups[g].WaitLeader(ctx); err != nil {
			return fmt.Errorf("group %d has no leader: %w", g, err)
		}
	}
	return nil
}

func (c *Cluster) groupConfig(id uint32) shard.GroupConfig {
	return shard.GroupConfig{ID: id, Bootstrap: true, SnapshotThreshold: c.cfg.SnapshotThreshold}
}

// initInfo records the cluster on first start and checks it on later ones.
func (c *Cluster) initInfo(ctx context.Context) error {
	if info, ok := c.meta.ClusterInfo(); ok {
		if info.Embedder != c.cfg.Embedder || info.Dim != c.cfg.Dim {
			return fmt.Errorf("%w: data dir %s was created with embedder %q (dimension %d); this start asks for %q (dimension %d): start with --embedder %s or use a new --data-dir",
				ErrEmbedderMismatch, c.cfg.DataDir, info.Embedder, info.Dim, c.cfg.Embedder, c.cfg.Dim, info.Embedder)
		}
		if c.cfg.Groups != 0 && c.cfg.Groups != info.Groups {
			c.log.Warn("--groups is fixed at cluster creation; using the recorded value",
				"requested", c.cfg.Groups, "groups", info.Groups)
		}
		c.info = info
		return nil
	}
	if c.cfg.Groups < 1 {
		return fmt.Errorf("%w: --groups must be at least 1", ErrInvalidCommand)
	}
	cmd := InitCluster{ClusterID: "cl_" + randomHex(8), Embedder: c.cfg.Embedder, Dim: c.cfg.Dim,
		Groups: c.cfg.Groups, CreatedAt: time.Now().UTC()}
	out, err := c.metaG.Propose(ctx, EncodeInitCluster(cmd))
	if err != nil {
		return fmt.Errorf("cannot record cluster: %w", err)
	}
	info, ok := out.(ClusterInfo)
	if !ok {
		return fmt.Errorf("cannot record cluster: unexpected result %v", out)
	}
	c.info = info
	return nil
}

func nodeID(cfg Config) (string, error) {
	if cfg.NodeID != "" {
		return cfg.NodeID, nil
	}
	path := filepath.Join(cfg.DataDir, "node-id")
	if b, err := os.ReadFile(path); err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
	}
	id := "node-" + randomHex(6)
	if err := os.WriteFile(path, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("cannot persist node id: %w", err)
	}
	return id, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Info is the cluster record.
func (c *Cluster) Info() ClusterInfo { return c.info }

// NodeID is this node's identity.
func (c *Cluster) NodeID() string { return c.cfg.NodeID }

// Meta is the local meta state (auth and settings are local reads).
func (c *Cluster) Meta() *Meta { return c.meta }

// ProposeMeta replicates a meta command.
func (c *Cluster) ProposeMeta(ctx context.Context, cmd []byte) (any, error) {
	out, err := c.metaG.Propose(ctx, cmd)
	return out, unavailable(err)
}

// GroupOf is the data group holding tenant.
func (c *Cluster) GroupOf(tenant string) uint32 { return TenantGroup(tenant, c.info.Groups) }

// Propose replicates cmd in tenant's group.
func (c *Cluster) Propose(ctx context.Context, tenant string, cmd []byte) (any, error) {
	out, err := c.groups[c.GroupOf(tenant)].Propose(ctx, cmd)
	return out, unavailable(err)
}

// ProposeAll replicates cmd in every data group, in group order.
func (c *Cluster) ProposeAll(ctx context.Context, cmd []byte) ([]any, error) {
	out := make([]any, 0, c.info.Groups)
	for g := 1; g <= c.info.Groups; g++ {
		res, err := c.groups[g].Propose(ctx, cmd)
		if err != nil {
			return nil, unavailable(err)
		}
		out = append(out, res)
	}
	return out, nil
}

// ReadFSM returns tenant's state machine after a linearizable read barrier.
func (c *Cluster) ReadFSM(ctx context.Context, tenant string) (*raftfsm.FSM, error) {
	g := c.GroupOf(tenant)
	if err := c.groups[g].ReadIndex(ctx); err != nil {
		return nil, unavailable(err)
	}
	return c.fsms[g], nil
}

// unavailable marks errors that mean "no leader answered" so the router
// answers 503 retryable.
func unavailable(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, shard.ErrNotLeader) || errors.Is(err, shard.ErrTimeout) ||
		errors.Is(err, shard.ErrShutdown) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

// Close stops every group cleanly (snapshotting those that grew).
func (c *Cluster) Close() error {
	collector.remove(c)
	return c.node.Close()
}

// ReadAllFSM returns every data group's state machine after a read barrier
// on each (scatter/gather: it fails as a whole if any group fails).
func (c *Cluster) ReadAllFSM(ctx context.Context) ([]*raftfsm.FSM, error) {
	out := make([]*raftfsm.FSM, 0, c.info.Groups)
	for g := 1; g <= c.info.Groups; g++ {
		if err := c.groups[g].ReadIndex(ctx); err != nil {
			return nil, unavailable(err)
		}
		out = append(out, c.fsms[g])
	}
	return out, nil
}
