package cluster

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestForwardLeaderCache: a node forwarding requests for a group it holds
// no replica of caches the group's leader; a cached node that answers it
// does not hold the group (NotHostedHeader), or cannot be reached, is
// dropped and the request goes to the leader found afresh.
func TestForwardLeaderCache(t *testing.T) {
	t.Parallel()
	nodes := startNodes(t, 1, "c1", "c2", "c3")
	tenant := tenantIn(1)
	var holder, via, other *Cluster
	waitUntil(t, "one node holds group 1 and hears its leader", func() bool {
		var hosts, rest []*Cluster
		for _, n := range nodes {
			if n.Hosts(tenant) {
				hosts = append(hosts, n)
			} else {
				rest = append(rest, n)
			}
		}
		if len(hosts) != 1 || len(rest) != 2 {
			return false
		}
		holder, via, other = hosts[0], rest[0], rest[1]
		_, addr := holder.groups[1].Leader()
		return addr != ""
	})
	holder.SetHTTPHandler(func([]byte) []byte { return []byte("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nholder") })
	other.SetHTTPHandler(func([]byte) []byte {
		return []byte("HTTP/1.1 503 Service Unavailable\r\n" + NotHostedHeader + ": 1\r\nContent-Length: 0\r\n\r\n")
	})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	forward := func(what string) {
		t.Helper()
		raw, err := via.ForwardHTTP(ctx, tenant, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		if err != nil || !bytesHasSuffix(raw, "holder") {
			t.Fatalf("%s: %q %v", what, raw, err)
		}
		if n, ok := via.leaders.Load(uint32(1)); !ok || n.(NodeInfo).NodeID != holder.NodeID() {
			t.Fatalf("%s: cached leader %v, want %s", what, n, holder.NodeID())
		}
	}
	forward("first request")

	via.leaders.Store(uint32(1), other.self)
	forward("a cached node that does not hold the group")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close()
	via.leaders.Store(uint32(1), NodeInfo{NodeID: "gone", RaftAddr: dead})
	forward("a cached node that cannot be reached")
}

func bytesHasSuffix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[len(b)-len(s):]) == s
}

// TestProposeSkipsNodeWithoutGroup: a proposal forwarded to a leader that
// no longer runs the group (a node stopping) is refused there before
// anything is applied, so it waits for the next leader instead of failing;
// so does a read's barrier.
func TestProposeSkipsNodeWithoutGroup(t *testing.T) {
	t.Parallel()
	for _, op := range []string{"propose", "read"} {
		t.Run(op, func(t *testing.T) {
			t.Parallel()
			nodes := startNodes(t, 3, op+"1", op+"2", op+"3")
			tenant := tenantIn(1)
			leader, follower := leaderAndFollower(t, nodes, 1)
			if err := leader.node.StopGroup(1); err != nil {
				t.Fatal(err)
			}
			if op == "read" {
				ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
				defer cancel()
				if _, err := follower.ReadFSM(ctx, tenant); err != nil {
					t.Fatalf("a read while the leader's group is stopped: %v", err)
				}
				return
			}
			if _, _, err := proposeAtom(follower, tenant, rand.New(rand.NewPCG(1, 2))); err != nil {
				t.Fatalf("a proposal while the leader's group is stopped: %v", err)
			}
		})
	}
}

// leaderAndFollower waits until every node is a voter of group g in every
// node's configuration (waitVoters says why every one), and returns its
// leader and a follower that knows it.
func leaderAndFollower(t *testing.T, nodes []*Cluster, g int) (leader, follower *Cluster) {
	t.Helper()
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.NodeID()
	}
	waitVoters(t, nodes, uint32(g), ids...)
	waitUntil(t, "the group has a leader and a follower that knows it", func() bool {
		leader, follower = nil, nil
		for _, n := range nodes {
			if n.groups[g].IsLeader() {
				leader = n
			}
		}
		for _, n := range nodes {
			if id, _, ok := n.localLeader(n.groups[g]); ok && leader != nil && n != leader && id == leader.NodeID() {
				follower = n
			}
		}
		return leader != nil && follower != nil
	})
	return leader, follower
}

// TestProposeWaitsOutLeadershipTransfer: a leader handing its leadership
// over refuses every command until the transfer ends (raft: up to an
// election timeout when the target is behind and cannot be reached). A
// proposal through a follower meets that refusal again and again; it is
// tried until its deadline, and lands once the leader takes commands again,
// where it failed (503) at the second refusal.
func TestProposeWaitsOutLeadershipTransfer(t *testing.T) {
	t.Parallel()
	nodes := startNodes(t, 3, "xfer1", "xfer2", "xfer3")
	tenant := tenantIn(1)
	leader, follower := leaderAndFollower(t, nodes, 1)
	var target *Cluster
	for _, n := range nodes {
		if n != leader && n != follower {
			target = n
		}
	}
	targetAddr := target.node.Addr()
	target.kill()
	rng := rand.New(rand.NewPCG(3, 4))
	writeAtom(t, follower, tenant, rng) // the target is now behind
	g := leader.groups[1]
	transfer := g.Raft().LeadershipTransferToServer(raft.ServerID(target.NodeID()), raft.ServerAddress(targetAddr))
	waitUntil(t, "the leader to refuse commands for the transfer", func() bool {
		err := g.Raft().Barrier(time.Second).Error()
		return errors.Is(err, raft.ErrLeadershipTransferInProgress)
	})
	if _, _, err := proposeAtom(follower, tenant, rng); err != nil {
		t.Fatalf("a proposal during the leadership transfer: %v", err)
	}
	if err := transfer.Error(); err == nil {
		t.Fatalf("the transfer to a stopped node succeeded")
	}
}
