package shard

import "errors"

// Sentinel errors of package shard. Callers compare with errors.Is: the errors
// returned by this package wrap one of these together with the underlying
// raft error and the group id.
var (
	// ErrNotLeader means this node does not lead the group (or lost leadership
	// before the operation finished); retry on the leader. Propose returns it
	// only for a command that never reached the log.
	ErrNotLeader = errors.New("shard: not leader")
	// ErrTimeout means the context's deadline passed before the operation
	// finished, or (Propose) leadership was lost after the command was
	// appended; a proposal may still be committed later.
	ErrTimeout = errors.New("shard: timeout")
	// ErrStorage means this node could not write the command to its log (a
	// full or failing disk). Nothing was appended, so the command will not
	// be applied: retrying is safe once the disk takes writes again.
	ErrStorage = errors.New("shard: cannot write the log")
	// ErrShutdown means the group or node has been closed.
	ErrShutdown = errors.New("shard: shutdown")
	// ErrUnknownGroup means the group is not started on this node.
	ErrUnknownGroup = errors.New("shard: unknown group")
	// ErrGroupStarted means StartGroup was called twice for one group id.
	ErrGroupStarted = errors.New("shard: group already started")
)
