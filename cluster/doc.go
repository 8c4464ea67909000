// Package cluster holds what every node of a hebb cluster must agree on
// beyond the data itself: the meta state machine (the cluster record, orgs,
// API keys, org settings) and the placement of tenants on data groups.
//
// # Meta state machine
//
// Meta is the state machine of the meta Raft group (the shard package runs
// it). Its contract is the one of any hebb state machine:
//
//   - Apply is deterministic. A command is one type byte followed by a JSON
//     payload, made by an Encode* function; apply is a dispatch table on the
//     type byte. Apply reads no clock and no randomness and never depends on
//     map iteration order: timestamps and IDs ride inside the command, and
//     every list it returns or writes is sorted.
//   - An undecodable command is a bug and panics. An expected failure (an
//     unknown org, a duplicate key ID) is the command's result: an error
//     value wrapping one of the sentinels of errors.go. A failed command
//     changes nothing.
//   - Snapshot copies the state under the lock and returns a writer that
//     touches no live state. The format is versioned JSON ({"version":1,...});
//     every version ever written keeps restoring (testdata/ holds a golden
//     snapshot per version). Two replicas with the same state write the same
//     bytes.
//   - Restore builds a fresh state from the snapshot and swaps it in; it
//     discards all previous state, and on error keeps the old state.
//   - Apply and Restore take the write lock; queries (Org, Settings,
//     Authenticate, ...) take the read lock and run from many goroutines.
//   - Queries read the local replica without a barrier. ProposeMeta returns
//     only once the local replica applied the command (a follower waits for
//     the leader's read index), so a node answers lookups of what it just
//     wrote: a follower learns of a commit only with the next append. It
//     also waits (at most 3 s) for every other live node in the meta
//     configuration to apply it (meta_spread.go), except the background
//     counters, so no node serves an older key, session, user or setting
//     once the write has answered.
//
// # API keys
//
// A key is "mk_live_" followed by 24 to 128 URL-safe characters; generated
// keys carry 40 base62 characters from crypto/rand. Only the SHA-256 of a key
// is stored, found through its 12-character public prefix and compared in
// constant time. The raw key is never stored or logged. Authenticate rejects a
// key with an *AuthError whose Reason is the interface's details.reason.
//
// # Placement
//
// A tenant (an org or a room) lives in data group
// 1 + JumpHash(fnv64a(tenant ID), groups). The number of groups is fixed at
// cluster creation, so placement needs no table and never moves a tenant.
package cluster
