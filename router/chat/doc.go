// Package chat is the chat-room persistence API (interface §4.9, version
// 2.0.0): a separate HTTP surface on its own listener (--chat-addr) with
// sign-in (an OpenID Connect provider, or an anonymous guest), sessions,
// rooms, messages, participants, service-token internal routes, and a
// WebSocket realtime channel.
//
// Where the state lives:
//   - Users, sessions (by the SHA-256 of their token) and the signing key are
//     meta-group state (cluster/chat_meta.go), so any node resolves a session
//     locally.
//   - Each room is a tenant "chat_<ulid>" of a data group (raftfsm/chat.go):
//     room record, participants, messages with every version, and an event
//     log whose sequence numbers are the realtime resume cursor.
//
// Invariants:
//   - An unsafe request that the session cookie alone authenticates comes
//     from the surface's own origin or a trusted one (origin.go), or is
//     refused with 403 cross_origin.
//   - Every change is one proposed command; permission checks that depend on
//     state (participant, owner, author) run inside apply, so concurrent
//     requests through different nodes cannot pass them together.
//   - A request about one room runs on a node holding a replica of the
//     room's group: elsewhere it is forwarded whole, before anything is read
//     or proposed (forward.go), and a new room's ID is drawn in a group the
//     node holds when it holds any.
//   - Reads check participation on a replica after a read barrier; only
//     participants read or post, a non-participant gets 403 everywhere, an
//     unknown room 404.
//   - The realtime channel sends a room's events in commit order: it reads
//     the local replica's event log after the client's cursor and waits on
//     the room's wake channel, so a client that reconnects with its last
//     seq receives exactly the events it missed (while the room keeps them).
//     A node holding no replica of the room's group reads the same log
//     through the group's leader, by long polls that the next event ends
//     (feed.go, cluster.ChatWatch), so any node serves any room's channel.
//   - Every error is the memory service's envelope {code, message,
//     requestId, retryable, details}; every body is validated and unknown
//     fields are refused.
//
// The surface reaches the cluster through Backend; *cluster.Cluster
// satisfies it.
package chat
