package shard

import (
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// nopFSM is a state machine that keeps nothing.
type nopFSM struct{}

func (nopFSM) Apply(*raft.Log) any                 { return nil }
func (nopFSM) Snapshot() (raft.FSMSnapshot, error) { return nil, io.ErrUnexpectedEOF }
func (nopFSM) Restore(io.ReadCloser) error         { return nil }

// TestCampaignIfAlone starts raft with a heartbeat timeout of an hour: on
// its own it would not campaign for that long. The group's only voter
// becomes leader at once, and its timeout is the hour again; a member of
// two voters is left as it is.
func TestCampaignIfAlone(t *testing.T) {
	for _, voters := range []int{1, 2} {
		rc := raft.DefaultConfig()
		rc.LocalID = "n1"
		rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = time.Hour, time.Hour, leaderLease
		rc.LogLevel = "ERROR"
		store := raft.NewInmemStore()
		snaps := raft.NewInmemSnapshotStore()
		_, trans := raft.NewInmemTransport("n1")
		conf := raft.Configuration{Servers: []raft.Server{{ID: "n1", Address: trans.LocalAddr()}}}
		if voters == 2 {
			conf.Servers = append(conf.Servers, raft.Server{ID: "n2", Address: "n2"})
		}
		if err := raft.BootstrapCluster(rc, store, store, snaps, trans, conf); err != nil {
			t.Fatal(err)
		}
		r, err := raft.NewRaft(rc, nopFSM{}, store, store, snaps, trans)
		if err != nil {
			t.Fatal(err)
		}
		before := r.ReloadableConfig()
		campaignIfAlone(r, rc.LocalID)
		if got := r.ReloadableConfig(); got != before {
			t.Errorf("%d voters: reloadable config %+v after, %+v before", voters, got, before)
		}
		if voters == 1 {
			deadline := time.Now().Add(time.Minute)
			for r.State() != raft.Leader && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
		}
		if leads := r.State() == raft.Leader; leads != (voters == 1) {
			t.Errorf("%d voters: leader %v", voters, leads)
		}
		if err := r.Shutdown().Error(); err != nil {
			t.Fatal(err)
		}
	}
}
