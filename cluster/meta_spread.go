package cluster

import (
	"context"
	"sync"
	"time"
)

// unspread lists the meta commands that answer without waiting for the
// other nodes: the background counters (usage sums, a key's last use),
// documented as at most a second behind. Every other meta write answers
// only once every other live node's meta replica has applied it. Each
// node reads keys, sessions, users, grants and settings from its own
// replica, which applies a committed command a few milliseconds after the
// leader (once 0.9 s), and a lookup syncs only when it finds nothing: a
// revoked key kept working through the other nodes after the revocation
// answered (a cluster audit stored writes with it), a renamed chat user
// was read back under the old name, a grant revoked by a replayed refresh
// token kept its access token working, a replaced console session stayed
// usable, and a key or user just created was missing from other nodes'
// pages and refused as unknown (cross-node audits, 2026-12-08).
var unspread = map[byte]bool{cmdAddUsage: true, cmdConsoleTouchKeys: true}

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
	for _, n := range c.spreadTargets() {
		if !c.spreadSkip.ask(n.NodeID, time.Now()) {
			continue
		}
		wg.Go(func() {
			_, err := c.call(ctx, n.RaftAddr, &rpcRequest{Op: opSync, Group: c.metaG.ID()})
			if c.spreadSkip.answered(n.NodeID, err, time.Now()) {
				c.log.Warn("a node did not confirm a meta write; meta writes wait for it again in "+
					spreadBackoff.String(), "node", n.NodeID, "err", err)
			}
		})
	}
	wg.Wait()
}

// spreadBackoff is how long meta writes stop waiting for a node that did
// not confirm one (stuck catching up, its disk full, its raft port cut
// while gossip still reaches it, a host down that gossip has not declared
// dead yet): each write would wait metaSpreadWait for it, chat and console
// sign-ins included.
const spreadBackoff = 10 * time.Second

// spreadSkips records the nodes meta writes do not wait for until a time.
type spreadSkips struct {
	mu    sync.Mutex
	until map[string]time.Time
}

// ask reports whether a meta write should wait for node at now.
func (s *spreadSkips) ask(node string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !now.Before(s.until[node])
}

// answered records node's answer (err nil: it confirmed); it reports
// whether the node has just started to be skipped, to be logged once.
func (s *spreadSkips) answered(node string, err error, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		delete(s.until, node)
		return false
	}
	if now.Before(s.until[node]) {
		return false // a write that asked before another one failed
	}
	if s.until == nil {
		s.until = map[string]time.Time{}
	}
	s.until[node] = now.Add(spreadBackoff)
	return true
}

// spreadTargets are the other nodes alive in gossip that hold a meta
// replica.
func (c *Cluster) spreadTargets() []NodeInfo {
	replicas := c.metaReplicas()
	var out []NodeInfo
	for _, st := range c.members.snapshot() {
		if st.status != StatusAlive || st.info.NodeID == c.cfg.NodeID || st.info.RaftAddr == "" ||
			replicas != nil && !replicas[st.info.NodeID] {
			continue
		}
		out = append(out, st.info)
	}
	return out
}

// metaReplicas is the set of nodes in the meta group's configuration
// (voters and non-voters; nil when it cannot be read). Only they hold a
// meta replica to bring up to date: a drained node left running, or a
// node of another cluster, would hold every meta write for metaSpreadWait
// (its barrier never passes).
func (c *Cluster) metaReplicas() map[string]bool {
	f := c.metaG.Raft().GetConfiguration()
	if f.Error() != nil {
		return nil
	}
	out := map[string]bool{}
	for _, srv := range f.Configuration().Servers {
		out[string(srv.ID)] = true
	}
	return out
}
