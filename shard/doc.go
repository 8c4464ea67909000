// Package shard runs the Raft groups of one hebb node.
//
// A group is one hashicorp/raft instance replicating one StateMachine, with a
// raft-boltdb/v2 log and stable store (fsync on) and a file snapshot store,
// kept under DataDir/raft/group-<id>/. A node hosts many groups: the meta
// group (id 0) and the data groups (1..N). Every group of a node, and the
// node-to-node RPC stream, share one TCP listener: each connection starts with
// a 9-byte mux header (magic "hebb", a kind byte, a big-endian uint32 group
// id) and is then handed to that group's raft transport or to the RPC handler.
//
// The StateMachine contract (the same as raft's FSM):
//   - Apply is deterministic and called in log order, never concurrently with
//     itself, Snapshot or Restore; its result is what Propose returns.
//   - Snapshot is called with no Apply running and must only capture state; the
//     returned write function runs later, concurrently with Apply, and must not
//     touch live state.
//   - Restore discards all state and replaces it with the snapshot's.
//
// Group commit: Propose hands its command to the group's proposer
// (proposer.go). While none of the proposer's entries is between raft.Apply
// and its result, a command is sent at once, alone and as it is: a lone
// caller never waits for a timer or for others. Otherwise it queues, and
// when the in-flight entry's result arrives the queued commands leave
// together (at most 256 commands or 4 MiB) as one entry, a command
// envelope (envelope.go): byte 0xFF, a version byte, the count, then each
// command length-prefixed. The adapter applies an envelope's commands in
// order, each at the entry's index, and every Propose receives its own
// command's result, or the entry's error (wrapped as for a lone command).
// Every group, the meta group included, proposes this way. Snapshots are
// unaffected (envelopes only live in the log); SnapshotThreshold and
// TrailingLogs count entries, not commands.
//
// Invariants:
//   - A node's raft ServerID is NodeConfig.NodeID and its ServerAddress is the
//     node's advertised address, the same for every group it hosts.
//   - A connection for a group that is not started is closed; raft retries, so
//     groups may be started in any order (data groups after the meta group).
//   - ReadIndex never writes to the Raft log in the steady state: one barrier
//     per leadership term, then a leadership check (skipped when this node is
//     the only voter of its latest configuration), and no wait for commands
//     committed but not yet applied: none of them is acknowledged, since a
//     command's result comes from the leader's apply. A follower's read
//     (LeaderReadIndex, WaitIndex) waits for the leader's applied index.
//   - The data of a command entry is one command (every entry written before
//     group commit is) or an envelope, whose first byte is 0xFF. No command
//     type uses that byte (raftfsm uses 1-9, the meta group's commands stay
//     below 64), so no older entry is mistaken for an envelope; a command
//     that does start with it is sent wrapped in an envelope of one. Every
//     replica applies an envelope the same way; an undecodable envelope is a
//     bug and panics.
//   - Snapshots written by this package carry a small header (the index of the
//     last command applied) in front of the StateMachine's bytes, so that a
//     restored group knows which commands its state already contains.
//   - A snapshot's CRC is checked as it is read (snapread.go): a reader never
//     gets the whole of a damaged state, so a Restore fails before its end
//     and must swap its state in only once it has read all of it. A log that
//     no longer reaches back to the snapshot raft restored fails the group's
//     start with ErrLogGap.
package shard
