package chat

import (
	"context"
	"time"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/raftfsm"
)

// Watcher is implemented by a backend whose nodes may hold no replica of a
// room's group (the cluster): such a node follows the room's events by long
// polling the group's leader (cluster.Cluster.WatchChat), so a realtime
// client may connect to any node.
type Watcher interface {
	Hosts(tenant string) bool
	WatchChat(ctx context.Context, w cluster.ChatWatch) (cluster.ChatWatchResult, error)
}

// eventSource gives a realtime stream its room's events.
type eventSource interface {
	// next returns up to realtimeBatch events after the cursor, waiting a
	// while for one when there is none yet; an empty feed (not missed,
	// not gone) means the wait ran out.
	next(ctx context.Context, room string, after uint64) (raftfsm.ChatFeed, error)
}

// localSource reads this node's replica of the room's group.
type localSource struct{ fsm *raftfsm.FSM }

func (l localSource) next(ctx context.Context, room string, after uint64) (raftfsm.ChatFeed, error) {
	feed := l.fsm.ChatEvents(room, after, realtimeBatch)
	if len(feed.Events) > 0 || feed.Missed || feed.Gone || feed.Wake == nil {
		return feed, nil
	}
	t := time.NewTimer(realtimeIdle)
	defer t.Stop()
	select {
	case <-feed.Wake:
		return l.fsm.ChatEvents(room, after, realtimeBatch), nil
	case <-t.C:
		return feed, nil
	case <-ctx.Done():
		return feed, ctx.Err()
	}
}

// remoteSource long polls the leader of the room's group.
type remoteSource struct{ w Watcher }

// remoteWait is how long a long poll of another node waits for an event.
const remoteWait = cluster.MaxChatWait

func (r remoteSource) next(ctx context.Context, room string, after uint64) (raftfsm.ChatFeed, error) {
	res, err := r.w.WatchChat(ctx, cluster.ChatWatch{Room: room, After: after, Limit: realtimeBatch, Wait: remoteWait})
	return res.Feed, err
}

// watcherFor returns the backend's Watcher when room's group is held by
// other nodes only.
func (s *Server) watcherFor(room string) (Watcher, bool) {
	w, ok := s.b.(Watcher)
	if !ok || !validID(roomPrefix, room) {
		return nil, false
	}
	return w, !w.Hosts(room)
}

// followRoom is memberRoom for a realtime reader: the room's view and where
// its events come from, this node's replica or, when it holds none, the
// group's leader.
func (s *Server) followRoom(c *call, room string) (eventSource, raftfsm.ChatRoomView, error) {
	if w, ok := s.watcherFor(room); ok {
		res, err := w.WatchChat(c.std, cluster.ChatWatch{Room: room})
		switch {
		case err != nil:
			return nil, raftfsm.ChatRoomView{}, err
		case !res.Found:
			return nil, raftfsm.ChatRoomView{}, notFound(raftfsm.ChatMsgRoomNotFound)
		case participantOf(res.View, c.ids) == nil:
			return nil, raftfsm.ChatRoomView{}, forbidden(raftfsm.ChatMsgNotParticipant)
		}
		return remoteSource{w}, res.View, nil
	}
	fsm, view, err := s.memberRoom(c, room)
	if err != nil {
		return nil, view, err
	}
	return localSource{fsm}, view, nil
}

// source picks a running stream's source again (its idle check): the
// room's group may have gained or lost a replica here since.
func (s *Server) source(ctx context.Context, room string) (eventSource, error) {
	if w, ok := s.watcherFor(room); ok {
		return remoteSource{w}, nil
	}
	fsm, err := s.b.ReadFSM(ctx, room)
	if err != nil {
		return nil, err
	}
	return localSource{fsm}, nil
}
