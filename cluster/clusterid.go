package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hebbdb/hebb/shard"
)

// clusterIDFile names, in a data dir, the cluster the node belongs to. A node
// gossips it from its first moment, so a node of another cluster that
// gossip reaches (a --join naming the wrong cluster) is never taken for a
// member: its groups share our group IDs, and a leader adding it would
// merge two clusters' Raft logs.
const clusterIDFile = "cluster-id"

func readClusterID(dataDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, clusterIDFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("cannot read the cluster id: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// recordClusterID checks the cluster record against the ID this node
// gossips, and on a node that had none (new, or from before the file)
// writes it and gossips it.
func (c *Cluster) recordClusterID() error {
	self := c.me()
	if self.ClusterID == c.info.ClusterID {
		return nil
	}
	if self.ClusterID != "" {
		return fmt.Errorf("%w: data dir %s belongs to cluster %s, but its meta group holds cluster %s",
			ErrCorruptSnapshot, c.cfg.DataDir, self.ClusterID, c.info.ClusterID)
	}
	if err := shard.WriteFileSynced(filepath.Join(c.cfg.DataDir, clusterIDFile), []byte(c.info.ClusterID+"\n"), 0o600); err != nil {
		return fmt.Errorf("cannot record the cluster id: %w", err)
	}
	self.ClusterID = c.info.ClusterID
	c.setSelf(self)
	if c.members != nil {
		// Not fatal: the next push/pull carries it if this broadcast is late.
		if err := c.members.setSelf(self, time.Second); err != nil {
			c.log.Warn("the cluster id is not gossiped yet", "err", err)
		}
	}
	return nil
}

// foreign reports whether n belongs to another cluster than this node.
func (c *Cluster) foreign(n NodeInfo) bool {
	own := c.me().ClusterID
	return own != "" && n.ClusterID != "" && n.ClusterID != own
}

// warnForeign logs, once per node, that gossip reaches a node of another
// cluster; it is ignored.
func (c *Cluster) warnForeign(n NodeInfo) {
	if _, seen := c.foreignSeen.LoadOrStore(n.NodeID, true); !seen {
		c.log.Warn("gossip reaches a node of another cluster; it is ignored (check --join)",
			"node", n.NodeID, "its_cluster", n.ClusterID, "gossip_addr", n.GossipAddr)
	}
}
