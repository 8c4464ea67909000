package cluster

import (
	"context"

	"github.com/hashicorp/raft"

	"github.com/hebbdb/hebb/shard"
)

// readdress points g's configuration at the Raft address gossip gives a
// member that restarted on another one (--raft-addr changed, a container
// given a new IP): until then every leader keeps sending to the old address
// and the member never hears from its groups. Adding a server that is
// already in the configuration changes only its address, keeping its
// suffrage. At most one change per call; only on g's leader.
func (c *Cluster) readdress(ctx context.Context, g *shard.Group, v nodeView) (bool, error) {
	f := g.Raft().GetConfiguration()
	if err := f.Error(); err != nil {
		return false, err
	}
	for _, s := range f.Configuration().Servers {
		id := string(s.ID)
		addr, ok := v.up[id]
		if !ok || addr == "" || addr == string(s.Address) {
			continue
		}
		c.log.Info("member moved to another raft address", "group", g.ID(), "node", id,
			"from", string(s.Address), "to", addr)
		if s.Suffrage == raft.Voter {
			return true, g.AddVoter(ctx, id, addr)
		}
		return true, g.AddNonvoter(ctx, id, addr)
	}
	return false, nil
}
