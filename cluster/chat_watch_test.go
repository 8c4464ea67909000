package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
)

// TestWatchChat follows a chat room from the node holding its group and
// from one holding no replica of it (one replica per group, two nodes).
func TestWatchChat(t *testing.T) {
	t.Parallel()
	nodes := startNodes(t, 1, "w1", "w2")
	n1, n2 := nodes[0], nodes[1]
	const room = "chat_01JWATCHTEST0000000000000"
	var holder, follower *Cluster
	waitUntil(t, "one node holds the room's group", func() bool {
		h1, h2 := n1.Hosts(room), n2.Hosts(room)
		holder, follower = n1, n2
		if h2 {
			holder, follower = n2, n1
		}
		return h1 != h2
	})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	propose := func(c *Cluster, cmd raftfsm.ChatCmd) error {
		cmd.Room, cmd.At, cmd.Actor, cmd.Actors = room, time.Now().UnixMicro(), "usr_owner", []string{"usr_owner"}
		out, err := c.Propose(ctx, room, cmd.Encode())
		if r, ok := out.(*raftfsm.ChatResult); err != nil || !ok || r.Err != nil {
			return fmt.Errorf("chat command %d: %v %+v", cmd.Op, err, out)
		}
		return nil
	}
	chat := func(c *Cluster, cmd raftfsm.ChatCmd) {
		t.Helper()
		if err := propose(c, cmd); err != nil {
			t.Fatal(err)
		}
	}
	chat(follower, raftfsm.ChatCmd{Op: raftfsm.ChatCreateRoom, Name: "watched"})

	var head uint64
	for _, c := range []*Cluster{holder, follower} {
		res, err := c.WatchChat(ctx, ChatWatch{Room: room})
		if err != nil || !res.Found || res.View.Room.Name != "watched" || len(res.View.Participants) != 1 || res.View.Head == 0 {
			t.Fatalf("%s: start of a watch: %v %+v", c.NodeID(), err, res)
		}
		head = res.View.Head
	}

	t.Run("a wait that runs out answers an empty feed", func(t *testing.T) {
		res, err := follower.WatchChat(ctx, ChatWatch{Room: room, After: head, Limit: 10, Wait: 50 * time.Millisecond})
		if err != nil || len(res.Feed.Events) != 0 || res.Feed.Missed || res.Feed.Gone || res.Feed.Head != head {
			t.Fatalf("%v %+v", err, res)
		}
	})
	t.Run("an event ends the wait", func(t *testing.T) {
		posted := make(chan error)
		go func() {
			time.Sleep(50 * time.Millisecond)
			posted <- propose(holder, raftfsm.ChatCmd{Op: raftfsm.ChatPost, Message: "msg_1", Content: "hello"})
		}()
		res, err := follower.WatchChat(ctx, ChatWatch{Room: room, After: head, Limit: 10, Wait: MaxChatWait})
		if err := <-posted; err != nil {
			t.Fatal(err)
		}
		if err != nil || len(res.Feed.Events) != 1 || res.Feed.Events[0].Kind != "message.created" ||
			res.Feed.Events[0].Message.Versions[0].Content != "hello" {
			t.Fatalf("%v %+v", err, res)
		}
		head = res.Feed.Events[0].Seq
	})
	t.Run("a cancelled caller stops waiting", func(t *testing.T) {
		cctx, stop := context.WithCancel(ctx)
		time.AfterFunc(50*time.Millisecond, stop)
		if res, err := follower.WatchChat(cctx, ChatWatch{Room: room, After: head, Limit: 10, Wait: MaxChatWait}); err == nil {
			t.Fatalf("no error after the caller cancelled: %+v", res)
		}
	})
	t.Run("a deleted room is gone", func(t *testing.T) {
		chat(follower, raftfsm.ChatCmd{Op: raftfsm.ChatDeleteRoom})
		res, err := follower.WatchChat(ctx, ChatWatch{Room: room, After: head, Limit: 10, Wait: MaxChatWait})
		if err != nil || !res.Feed.Gone || len(res.Feed.Events) != 1 || res.Feed.Events[0].Kind != "room.deleted" {
			t.Fatalf("%v %+v", err, res)
		}
		if res, err := follower.WatchChat(ctx, ChatWatch{Room: room}); err != nil || res.Found {
			t.Fatalf("start of a watch of a deleted room: %v %+v", err, res)
		}
	})
	t.Run("a wait beyond the bound is refused", func(t *testing.T) {
		if _, err := follower.WatchChat(ctx, ChatWatch{Room: room, Wait: MaxChatWait + time.Second}); err == nil {
			t.Fatal("accepted")
		}
	})
}
