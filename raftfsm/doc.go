// Package raftfsm is the deterministic state machine of one hebb data group.
//
// A group holds many tenants (orgs and rooms). Per tenant it keeps the atoms,
// each domain's vectors in contiguous blocks of 8,192 rows (arena.go), the
// indexes (external_ref,
// fingerprint, concept postings, the recent feed ordered by (created_at, id)),
// the Hebbian edges and the supersession links.
//
// The contract, written out the way hashicorp/raft's fsm.go does it:
//
//   - Apply is deterministic. It reads nothing but the command and the current
//     state: no clock, no randomness, no map-iteration order. Timestamps and
//     IDs ride inside the command. Every replica fed the same log reaches the
//     same state (StateHash proves it in the tests).
//   - A command is a 1-byte type followed by a binary payload; apply is a
//     dispatch table. An undecodable command is a bug and panics. An expected
//     failure (a 404 or 409 of the interface) is returned in the apply result.
//   - Snapshot captures the state quickly under the lock; the bytes are written
//     later, concurrently with Apply. Restore builds a fresh state from a
//     versioned snapshot and swaps it in, discarding everything before.
//   - Reads (search, recent, lookups, export pages) take a read lock and never
//     mutate. Effects of reads (access counts) come back as Touch commands.
//
// raftfsm imports only vecmath: the Raft plumbing lives in shard, which adapts
// FSM to hashicorp/raft.
package raftfsm
