package cluster

import (
	"context"
	"sync"
	"time"
)

// spreads lists the meta commands that change records the other nodes
// already hold: access taken away (a key revoked, an org's plan or
// settings changed, sessions, grants or a member ended) and a chat user's
// profile changed or a guest signed in to an account. Every node reads
// these from its own replica of the meta group, which applies a committed
// command a few milliseconds after the leader (once 0.9 s), and a lookup
// only syncs when it finds nothing: a revoked key kept working through the
// other nodes after the revocation answered (a cluster audit stored writes
// with it), and a renamed chat user was read back under the old name. So
// such a write answers only once every other live node has applied it.
var spreads = map[byte]bool{
	cmdRevokeKey: true, cmdUpdateSettings: true, cmdChatRevokeSessions: true,
	cmdConsoleSetRole: true, cmdConsoleSignOut: true, cmdConsoleSetPassword: true, cmdConsoleCancelInvite: true,
	cmdOAuthRevoke: true, cmdChatUpdateUser: true, cmdChatSignIn: true,
}

// metaSpreadWait bounds the wait for the other nodes: one that does not
// confirm by then (unreachable, stopping) is logged, and the write answers.
const metaSpreadWait = 3 * time.Second

// spreadMeta returns once every other live node's meta replica has applied
// every command committed before the call (each runs a read barrier), or
// metaSpreadWait has passed.
func (c *Cluster) spreadMeta(ctx context.Context) {
	if c.members == nil { // no gossip: no other node
		return
	}
	ctx, cancel := context.WithTimeout(ctx, metaSpreadWait)
	defer cancel()
	var wg sync.WaitGroup
	for _, st := range c.members.snapshot() {
		if st.status != StatusAlive || st.info.NodeID == c.cfg.NodeID || st.info.RaftAddr == "" {
			continue
		}
		wg.Go(func() {
			if _, err := c.call(ctx, st.info.RaftAddr, &rpcRequest{Op: opSync, Group: c.metaG.ID()}); err != nil {
				c.log.Warn("a meta write may not be in effect on a node yet",
					"node", st.info.NodeID, "err", err)
			}
		})
	}
	wg.Wait()
}
