package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
	"github.com/hebbdb/hebb/shard"
)

// ChatWatch asks for a chat room's events after a cursor: how a node that
// holds no replica of the room's group follows it (the chat surface's
// realtime channel), by long polling the group's leader.
type ChatWatch struct {
	Room  string
	After uint64 // the last event the caller has
	Limit int    // at most this many events
	// Wait is how long the answering node waits for an event when there is
	// none after the cursor yet. Zero answers at once, after a read
	// barrier, with the room's view: how a stream starts.
	Wait time.Duration
}

// MaxChatWait bounds ChatWatch.Wait: a node-to-node request must finish
// within shard.DefaultTimeout.
const MaxChatWait = shard.DefaultTimeout / 2

// ChatWatchResult is a chat room as a node holding its group sees it.
type ChatWatchResult struct {
	Found bool                 // the room exists and is not deleted (Wait 0 only)
	View  raftfsm.ChatRoomView // the room, participants and head (Wait 0 only)
	Feed  raftfsm.ChatFeed     // the events after the cursor; Wake is nil
}

// WatchChat answers w here when this node holds the room's group, or asks
// the group's leader. An empty feed (no events, not missed, not gone) means
// the wait ran out.
func (c *Cluster) WatchChat(ctx context.Context, w ChatWatch) (ChatWatchResult, error) {
	if w.Wait > MaxChatWait {
		return ChatWatchResult{}, fmt.Errorf("cluster: chat watch of %v exceeds %v", w.Wait, MaxChatWait)
	}
	g := c.groups[c.GroupOf(w.Room)]
	if c.hosts(g) {
		res, err := c.watchLocal(ctx, g, w)
		if !errors.Is(err, errLeftGroup) {
			return res, err
		}
	}
	_, addr := c.leaderOf(ctx, g)
	if addr == "" {
		return ChatWatchResult{}, fmt.Errorf("%w: group %d has no reachable leader", ErrUnavailable, g.ID())
	}
	ctx, cancel := context.WithTimeout(ctx, w.Wait+shard.DefaultTimeout/2)
	defer cancel()
	resp, err := c.call(ctx, addr, &rpcRequest{Op: opChatWatch, Group: g.ID(), Watch: w})
	if err != nil {
		return ChatWatchResult{}, unavailable(err)
	}
	return resp.Watch, nil
}

// watchLocal answers w from this node's replica of g (the caller checked
// it holds one). Only a stream's start needs the barrier: later calls carry
// a cursor this group's log already reached, and a replica behind it waits
// for the events to come.
func (c *Cluster) watchLocal(ctx context.Context, g *shard.Group, w ChatWatch) (ChatWatchResult, error) {
	f := c.fsms[g.ID()]
	var res ChatWatchResult
	if w.Wait <= 0 {
		if err := c.barrier(ctx, g); err != nil {
			return res, err
		}
		res.View, res.Found = f.ChatRoom(w.Room)
	}
	timer := time.NewTimer(max(w.Wait, 0))
	defer timer.Stop()
	for {
		res.Feed = f.ChatEvents(w.Room, w.After, w.Limit)
		wake := res.Feed.Wake
		res.Feed.Wake = nil
		if w.Wait <= 0 || wake == nil || len(res.Feed.Events) > 0 || res.Feed.Missed || res.Feed.Gone {
			return res, nil
		}
		select {
		case <-wake:
		case <-timer.C:
			return res, nil
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
}
