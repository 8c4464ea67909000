package cluster

import (
	"context"
	"fmt"
	"strings"
)

// admissible refuses a joining node whose embedder is not the cluster's:
// its vectors could not be compared with the others', and it would find
// out only after it had been made a member. A join that names no embedder
// (a node of an older version) is let through; it checks after joining.
func (c *Cluster) admissible(req *rpcRequest) error {
	info, ok := c.meta.ClusterInfo()
	if !ok || info.accepts(NodeInfo{Embedder: req.Embedder, Dim: req.Dim}) {
		return nil
	}
	return fmt.Errorf("%w: the cluster's embedder is %q (dimension %d) and node %s asks for %q (dimension %d): start it with %s",
		ErrEmbedderMismatch, info.Embedder, info.Dim, req.Node.NodeID, req.Embedder, req.Dim, embedderFlags(info.Embedder))
}

// accepts reports whether node n may hold replicas of the cluster: its
// embedder is the cluster's. A node gossips (and so may be seen alive) before
// it asks to join; a node of an older version gossips no embedder.
func (info ClusterInfo) accepts(n NodeInfo) bool {
	return n.Embedder == "" || info.Embedder == "" || n.Embedder == info.Embedder && n.Dim == info.Dim
}

// embedderFlags is how to ask serve for the embedder of an identity
// ("builtin/2", "hash", "http:<model>").
func embedderFlags(identity string) string {
	if model, ok := strings.CutPrefix(identity, "http:"); ok {
		return "--embedder http --embedder-model " + model
	}
	name, _, _ := strings.Cut(identity, "/")
	return "--embedder " + name
}

// checkDuplicate refuses to start when another live process answers to this
// node's ID: a copy of its data dir (or the same --node-id) started beside
// it would campaign in its groups and answer for a stale replica. A node
// gossiping this ID from another address that no longer answers is this
// node's previous run.
func (c *Cluster) checkDuplicate(ctx context.Context) error {
	other, ok := c.members.lastClaimant()
	if !ok || other.RaftAddr == "" || other.RaftAddr == c.me().RaftAddr {
		return nil
	}
	if _, live := c.probe(ctx, map[string]string{c.cfg.NodeID: other.RaftAddr})[c.cfg.NodeID]; !live {
		return nil
	}
	return fmt.Errorf("%w: node id %s is in use by a live node (raft %s, gossip %s): data dir %s is a copy of "+
		"that node's, or --node-id repeats its id. To add this machine as a new node, start it on an empty "+
		"--data-dir without --node-id", ErrDuplicateNode, c.cfg.NodeID, other.RaftAddr, other.GossipAddr, c.cfg.DataDir)
}
