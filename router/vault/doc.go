// Package vault seals secret values for hebb's vault (operator.md §5).
//
// Values are sealed with AES-256-GCM under a master key ring before they
// enter a Raft entry, so no log, snapshot or export holds them in clear.
// Every value gets a fresh random nonce; the additional data binds the
// ciphertext to its tenant, alias and atom ID, so a sealed value moved to
// another record does not open. The ring's first key seals; every key opens,
// which is how a master key is rotated. A key opens what it sealed whatever
// id the ring gives it: the id a value carries only says which key to try
// first.
package vault
