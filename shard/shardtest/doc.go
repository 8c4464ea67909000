// Package shardtest runs Raft groups of package shard in one process, over
// real TCP on loopback, with faults injected between the nodes: partitions,
// heals, kills, restarts and added latency. It is the in-process harness of
// DESIGN.md §1, in the style of hashicorp/raft's testing.go, for tests of
// shard and of the packages above it.
//
// Every node advertises the address of a proxy owned by the harness; the
// proxy forwards to the node's real listener. The proxy learns which node
// dialled from the RPC header of the first raft request on the connection
// (hashicorp/raft sends the sender's ServerID in every request), so that a
// partition can cut exactly the links between two sets of nodes.
//
// Invariants:
//   - A cut link carries nothing: connections across it are closed when the
//     partition starts and refused while it lasts, in both directions.
//   - Killing a node closes it (its stores stay on disk); restarting it
//     reopens the same data directory behind the same advertised address
//     with fresh state machines, which recover from snapshot and log.
//   - Node ids are "node0".."nodeN-1"; node i is index i in every method.
//   - Waits are bounded by a generous guard (a hang fails the test); no test
//     asserts on time.
package shardtest
