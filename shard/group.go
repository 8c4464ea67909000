package shard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// Defaults of GroupConfig and of the raft timing used by every group.
const (
	DefaultSnapshotThreshold = 8192
	DefaultSnapshotInterval  = 30 * time.Second
	DefaultTrailingLogs      = 10240
	DefaultSnapshotBytes     = 64 << 20
	// DefaultTimeout bounds Propose, ReadIndex and membership changes whose
	// context has no deadline.
	DefaultTimeout = 10 * time.Second

	snapshotsRetained = 2
	// logCacheSize is how many recent log entries each group keeps in
	// memory for replication. An entry is up to maxBatchBytes (a 500-item
	// batch carries ~750 KB of vectors), so 512 held ~100 MB after a
	// million batched writes and could hold gigabytes; followers that lag
	// further read the log store (memory-mapped).
	logCacheSize     = 64
	transportMaxPool = 3
	transportTimeout = 10 * time.Second
)

// GroupConfig configures one Raft group.
type GroupConfig struct {
	ID                uint32
	Bootstrap         bool          // when the group has no existing state: bootstrap a one-voter config (this node)
	SnapshotThreshold uint64        // default 8192 log entries
	SnapshotInterval  time.Duration // default 30s (how often raft checks the threshold)
	TrailingLogs      uint64        // default 10240
	// SnapshotBytes also snapshots the group once the commands applied since
	// the last snapshot reach this many bytes or half the last snapshot's
	// size, whichever is larger (default 64 MiB): raft counts entries, and a
	// batch or a group commit puts hundreds of writes in one, so a restart
	// could otherwise replay a great deal through the state machine.
	SnapshotBytes int64
}

func (c GroupConfig) withDefaults() GroupConfig {
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = DefaultSnapshotThreshold
	}
	if c.SnapshotInterval == 0 {
		c.SnapshotInterval = DefaultSnapshotInterval
	}
	if c.TrailingLogs == 0 {
		c.TrailingLogs = DefaultTrailingLogs
	}
	if c.SnapshotBytes == 0 {
		c.SnapshotBytes = DefaultSnapshotBytes
	}
	return c
}

// leaderLease is raft's LeaderLeaseTimeout.
const leaderLease = 250 * time.Millisecond

// raftConfig is raft's default configuration tuned for loopback and LAN
// latencies.
func raftConfig(nodeID string, c GroupConfig, logger hclog.Logger) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(nodeID)
	rc.HeartbeatTimeout = 500 * time.Millisecond
	rc.ElectionTimeout = 500 * time.Millisecond
	rc.LeaderLeaseTimeout = leaderLease
	rc.CommitTimeout = 5 * time.Millisecond
	rc.BatchApplyCh = true
	rc.SnapshotThreshold = c.SnapshotThreshold
	rc.SnapshotInterval = c.SnapshotInterval
	rc.TrailingLogs = c.TrailingLogs
	rc.Logger = logger
	return rc
}

// Group is one Raft group hosted by a Node.
type Group struct {
	id    uint32
	cfg   GroupConfig
	node  *Node
	log   *slog.Logger
	raft  *raft.Raft
	fsm   *fsmAdapter
	prop  *proposer
	logs  raft.LogStore // the store behind a cache; entries are read by ReadIndex
	store *raftboltdb.BoltStore
	blobs *blobLog // store with large commands' data in segment files
	// stable is store as raft's stable store, cut off before store closes.
	stable *stableStore
	snaps  *raft.FileSnapshotStore
	done   chan struct{}

	// readyTerm is the last leadership term in which a ReadIndex barrier was
	// committed and applied, so that reads write to the log once per term.
	readyTerm atomic.Uint64

	// bootIndex is the last log index on disk when the group opened; the
	// group has caught up once it applied that far (see CaughtUp).
	bootIndex uint64
	caughtUp  atomic.Bool

	// storageFailing is set while the log store refuses appends (markedLogs).
	storageFailing *atomic.Bool

	closeOnce sync.Once
	closeErr  error
}

// openGroup opens the stores of group cfg.ID under the node's data directory,
// bootstraps it when asked and new, and starts its raft.
func openGroup(n *Node, cfg GroupConfig, sm StateMachine) (g *Group, err error) {
	cfg = cfg.withDefaults()
	log := n.log.With("group", cfg.ID)
	hlog := newHCLogger(log)
	dir := GroupDir(n.cfg.DataDir, cfg.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", dir, err)
	}
	layer, err := n.registerLayer(cfg.ID)
	if err != nil {
		return nil, err
	}
	// MaxRPCsInFlight 1 turns pipelined replication off: raft v1.7.3's
	// pipeline can deadlock after a rejected append (a follower then gets
	// heartbeats but no entries, and Shutdown hangs; hashicorp/raft#612).
	trans := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: layer, MaxPool: transportMaxPool, Timeout: transportTimeout, Logger: hlog,
		MaxRPCsInFlight: 1,
	})
	defer func() {
		if err != nil {
			trans.Close()
		}
	}()
	if _, err := checkLostLog(dir, log); err != nil {
		return nil, err
	}
	if err := checkLogFile(filepath.Join(dir, "raft.db")); err != nil {
		return nil, err
	}
	store, err := openLogStore(filepath.Join(dir, "raft.db"))
	if err != nil {
		return nil, fmt.Errorf("cannot open log store: %w", err)
	}
	defer func() {
		if err != nil {
			store.Close()
		}
	}()
	partial, err := removePartialSnapshots(dir)
	if len(partial) > 0 {
		log.Warn("removed unfinished snapshots", "snapshots", partial)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot remove unfinished snapshots: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, snapshotsRetained, hlog)
	if err != nil {
		return nil, fmt.Errorf("cannot open snapshot store: %w", err)
	}
	blobs, err := openBlobLog(filepath.Join(dir, "segments"), store)
	if err != nil {
		return nil, fmt.Errorf("cannot open log segments: %w", err)
	}
	defer func() {
		if err != nil {
			blobs.Close()
		}
	}()
	logs, err := raft.NewLogCache(logCacheSize, blobs)
	if err != nil {
		return nil, fmt.Errorf("cannot create log cache: %w", err)
	}
	rc := raftConfig(n.cfg.NodeID, cfg, hlog)
	if cfg.Bootstrap {
		if err := bootstrapIfNew(rc, logs, store, snaps, trans); err != nil {
			return nil, err
		}
	}
	boot, err := logs.LastIndex()
	if err != nil {
		return nil, fmt.Errorf("cannot read the last log index: %w", err)
	}
	label := groupLabel(cfg.ID)
	fsm := newFSMAdapter(sm, label)
	done := make(chan struct{})
	stable := &stableStore{s: store, done: done, log: log}
	failing := new(atomic.Bool)
	r, err := newRaft(rc, fsm, markedLogs{logs, failing}, stable, sizedStore{cleanStore{snaps, dir}}, trans)
	if err != nil && strings.Contains(err.Error(), "failed to load any existing snapshots") {
		return nil, fmt.Errorf("cannot start raft: %w; every snapshot in %s failed to load: move the damaged "+
			"ones aside (a start then replays the log from its first entry, and refuses with its own advice "+
			"when the log no longer reaches back that far), or restore them from a backup", err, filepath.Join(dir, "snapshots"))
	}
	if err != nil {
		return nil, fmt.Errorf("cannot start raft: %w", err)
	}
	grp := &Group{
		id: cfg.ID, cfg: cfg, node: n, log: log, raft: r, fsm: fsm,
		prop: newProposer(r.Apply, done, proposeBatch.WithLabelValues(label)),
		logs: logs, store: store, blobs: blobs, stable: stable, snaps: snaps, done: done, bootIndex: boot,
		storageFailing: failing,
	}
	go grp.snapshotBySize()
	campaignIfAlone(r, rc.LocalID)
	return grp, nil
}

// campaignIfAlone starts an election at once when this node is the group's
// only voter. Raft otherwise waits a heartbeat timeout (0.5–1 s) for word
// from a leader that cannot exist: at every start of a single-node server,
// and after each group's restore, before it can serve. Lowering the
// heartbeat timeout through ReloadConfig wakes raft's follower loop at once
// (it re-checks its timer); having heard from no leader, it campaigns and,
// the only voter, wins. The timeout goes back at once: the wake-up is
// already queued.
func campaignIfAlone(r *raft.Raft, id raft.ServerID) {
	f := r.GetConfiguration()
	if f.Error() != nil {
		return
	}
	servers := f.Configuration().Servers
	if len(servers) != 1 || servers[0].ID != id || servers[0].Suffrage != raft.Voter {
		return
	}
	rc := r.ReloadableConfig()
	short := rc
	short.HeartbeatTimeout = max(rc.HeartbeatTimeout/2, leaderLease) // raft refuses one under the lease
	if short.HeartbeatTimeout < rc.HeartbeatTimeout && r.ReloadConfig(short) == nil {
		_ = r.ReloadConfig(rc)
	}
}

// snapshotCheck is how often a group compares the bytes applied since its
// last snapshot with GroupConfig.SnapshotBytes.
const snapshotCheck = 2 * time.Second

// snapshotBySize snapshots the group when the commands applied since the
// last snapshot reach max(SnapshotBytes, last snapshot size / 2), until the
// group closes.
func (g *Group) snapshotBySize() {
	t := time.NewTicker(snapshotCheck)
	defer t.Stop()
	for {
		select {
		case <-g.done:
			return
		case <-t.C:
		}
		// The counter first: the snapshot list is files on disk.
		applied := g.fsm.sinceSnap.Load()
		if applied < g.cfg.SnapshotBytes {
			continue
		}
		if metas, err := g.snaps.List(); err == nil && len(metas) > 0 && applied < metas[0].Size/2 {
			continue
		}
		err := g.raft.Snapshot().Error()
		if err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) && !errors.Is(err, raft.ErrRaftShutdown) {
			g.log.Warn("cannot snapshot group by log size", "err", err)
		}
	}
}

// CaughtUp reports whether the group has applied its log as it stood on
// disk when it opened (a restart replays it through the state machine,
// which can take a while): until then reads wait for the replay, so a
// readiness probe should not count the node ready. An entry of that log
// that was never committed (a follower's tail a new leader overwrote) does
// not hold it back: applying up to the commit index is enough then. Once
// true it stays true.
func (g *Group) CaughtUp() bool {
	if g.caughtUp.Load() {
		return true
	}
	// raft's applied index runs ahead of the state machine (it counts
	// entries handed over, and entries the machine never sees), so the
	// last command up to the target must have been applied too.
	target := g.bootIndex
	if commit := g.raft.CommitIndex(); commit > 0 && commit < target {
		target = commit
	}
	if g.raft.AppliedIndex() < target {
		return false
	}
	cmd, err := g.lastCommandUpTo(target)
	if err != nil || cmd > g.fsm.applied() {
		return false
	}
	g.caughtUp.Store(true)
	return true
}

// boltLockTimeout bounds the wait for the lock of a raft.db another process
// (or node) holds. A variable so tests can shorten it.
var boltLockTimeout = 5 * time.Second

// restartAdvice is what to do about a damaged log whose raft.db is at path.
func restartAdvice(path string) string {
	return fmt.Sprintf("restore it from a backup, or move %s aside to restart this group from its last snapshot "+
		"(writes after that snapshot are then lost on this node; in a cluster its other replicas still hold them)",
		path)
}

// openLogStore opens the raft log and stable store, fsync on. A damaged
// page panics inside bbolt as it walks the pages at open (or faults its
// mapped read): that is an error naming the file and what to do, not a
// stack trace that repeats at every start.
func openLogStore(path string) (st *raftboltdb.BoltStore, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			st, err = nil, fmt.Errorf("%s is damaged (bbolt: %v); %s", path, r, restartAdvice(path))
		}
	}()
	opts := *bbolt.DefaultOptions
	opts.Timeout = boltLockTimeout
	// The log's pages are freed as snapshots truncate it, so a group that
	// took many writes keeps a file of mostly free pages (1.9 GB after a
	// million atoms). bbolt's default writes the whole free list at every
	// commit (megabytes, and as much garbage for the collector, every
	// 100 ms of access counts); instead it is rebuilt when the file opens.
	opts.NoFreelistSync = true
	opts.FreelistType = bbolt.FreelistMapType
	st, err = raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: &opts, NoSync: false})
	if errors.Is(err, bbolt.ErrTimeout) { // bbolt's file lock
		return nil, fmt.Errorf("%s is locked: another process (a hebb serve on the same --data-dir?) holds it: %w", path, err)
	}
	return st, err
}

// bootstrapIfNew writes a one-voter configuration (this node) when the group
// has no state yet.
func bootstrapIfNew(rc *raft.Config, logs raft.LogStore, store *raftboltdb.BoltStore,
	snaps raft.SnapshotStore, trans raft.Transport) error {
	exists, err := raft.HasExistingState(logs, store, snaps)
	if err != nil {
		return fmt.Errorf("cannot inspect existing state: %w", err)
	}
	conf := raft.Configuration{Servers: []raft.Server{
		{Suffrage: raft.Voter, ID: rc.LocalID, Address: trans.LocalAddr()},
	}}
	if !exists {
		if err := raft.BootstrapCluster(rc, logs, store, snaps, trans, conf); err != nil {
			return fmt.Errorf("cannot bootstrap: %w", err)
		}
		return nil
	}
	return finishBootstrap(logs, snaps, conf)
}

// finishBootstrap completes a bootstrap cut short between its two writes:
// raft.BootstrapCluster stores the current term, then the configuration
// entry, each its own transaction, and a kill between them left a group
// with a term and nothing else. Raft counts that as existing state, so the
// group never bootstrapped again and never had a voter ("no known peers"),
// and the node never became ready. Only a bootstrapping node gets here: a
// group without a log entry or a snapshot then has never had a
// configuration, and its one voter is this node.
func finishBootstrap(logs raft.LogStore, snaps raft.SnapshotStore, conf raft.Configuration) error {
	last, err := logs.LastIndex()
	if err != nil {
		return fmt.Errorf("cannot inspect existing state: %w", err)
	}
	list, err := snaps.List()
	if err != nil {
		return fmt.Errorf("cannot inspect existing state: %w", err)
	}
	if last > 0 || len(list) > 0 {
		return nil
	}
	entry := &raft.Log{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: raft.EncodeConfiguration(conf)}
	if err := logs.StoreLog(entry); err != nil {
		return fmt.Errorf("cannot finish an interrupted bootstrap: %w", err)
	}
	return nil
}

// StorageFailing reports whether this replica's last append to its log
// failed (a full or failing disk): a follower then falls behind until the
// disk takes writes again, and reads should not wait for it.
func (g *Group) StorageFailing() bool { return g.storageFailing.Load() }

// ID is the group id.
func (g *Group) ID() uint32 { return g.id }

// Raft exposes the underlying raft instance (membership, stats, snapshots).
func (g *Group) Raft() *raft.Raft { return g.raft }

// IsLeader reports whether this node currently leads the group.
func (g *Group) IsLeader() bool { return g.raft.State() == raft.Leader }

// Leader returns the ServerID and address of the known leader, "" when none.
func (g *Group) Leader() (id, addr string) {
	a, i := g.raft.LeaderWithID()
	return string(i), string(a)
}

// AppliedIndex is the log index of the last command reflected in the local
// StateMachine (applied, or contained in the snapshot it was restored from).
func (g *Group) AppliedIndex() uint64 { return g.fsm.applied() }

// Stats returns raft's statistics plus the group id and AppliedIndex.
func (g *Group) Stats() map[string]string {
	s := g.raft.Stats()
	s["group"] = strconv.FormatUint(uint64(g.id), 10)
	s["applied_command_index"] = strconv.FormatUint(g.AppliedIndex(), 10)
	return s
}

// Propose replicates cmd through the group's log and returns the
// StateMachine's Apply result. Errors wrap ErrNotLeader (refused: the
// command never reached the log), ErrTimeout (ctx deadline, DefaultTimeout
// when ctx has none, or leadership lost after the command was appended) or
// ErrShutdown. After ErrTimeout the command may still be committed.
// Concurrent calls share Raft entries (group commit, see proposer); each
// still gets its own command's result or error.
func (g *Group) Propose(ctx context.Context, cmd []byte) (any, error) {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	if err := g.usable(ctx); err != nil {
		return nil, fmt.Errorf("cannot propose to group %d: %w", g.id, err)
	}
	res, err := g.prop.propose(ctx, cmd)
	if err != nil {
		return nil, fmt.Errorf("cannot propose to group %d: %w", g.id, err)
	}
	return res, nil
}

// WaitLeader blocks until some leader of the group is known.
func (g *Group) WaitLeader(ctx context.Context) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if addr, _ := g.raft.LeaderWithID(); addr != "" {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("cannot find leader of group %d: %w", g.id, ctxError(ctx))
		case <-g.done:
			return fmt.Errorf("cannot find leader of group %d: %w", g.id, ErrShutdown)
		}
	}
}

// AddVoter adds (or promotes) a voter; only on the leader.
func (g *Group) AddVoter(ctx context.Context, id, addr string) error {
	return g.changeMembership(ctx, "add voter "+id, func(t time.Duration) raft.Future {
		return g.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, t)
	})
}

// AddNonvoter adds a non-voting member that receives the log; only on the
// leader.
func (g *Group) AddNonvoter(ctx context.Context, id, addr string) error {
	return g.changeMembership(ctx, "add non-voter "+id, func(t time.Duration) raft.Future {
		return g.raft.AddNonvoter(raft.ServerID(id), raft.ServerAddress(addr), 0, t)
	})
}

// DemoteVoter makes a voter a non-voter, which stops it from campaigning;
// only on the leader.
func (g *Group) DemoteVoter(ctx context.Context, id string) error {
	return g.changeMembership(ctx, "demote "+id, func(t time.Duration) raft.Future {
		return g.raft.DemoteVoter(raft.ServerID(id), 0, t)
	})
}

// RemoveServer removes a member; only on the leader.
func (g *Group) RemoveServer(ctx context.Context, id string) error {
	return g.changeMembership(ctx, "remove "+id, func(t time.Duration) raft.Future {
		return g.raft.RemoveServer(raft.ServerID(id), 0, t)
	})
}

func (g *Group) changeMembership(ctx context.Context, what string, start func(time.Duration) raft.Future) error {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	if err := g.usable(ctx); err != nil {
		return fmt.Errorf("cannot %s in group %d: %w", what, g.id, err)
	}
	if err := g.await(ctx, start(untilDeadline(ctx))); err != nil {
		return fmt.Errorf("cannot %s in group %d: %w", what, g.id, err)
	}
	return nil
}

// usable returns the error an operation should fail with before it starts.
func (g *Group) usable(ctx context.Context) error {
	select {
	case <-g.done:
		return ErrShutdown
	default:
	}
	if ctx.Err() != nil {
		return ctxError(ctx)
	}
	return nil
}

// await waits for f, the context or the group's shutdown and maps raft's
// errors onto the package's sentinels.
func (g *Group) await(ctx context.Context, f raft.Future) error {
	res := make(chan error, 1)
	go func() { res <- f.Error() }()
	select {
	case err := <-res:
		return raftError(err)
	case <-ctx.Done():
		return ctxError(ctx)
	case <-g.done:
		return ErrShutdown
	}
}

// close snapshots the group if its log has grown enough, shuts raft down and
// closes the log store. Idempotent.
func (g *Group) close() error {
	g.closeOnce.Do(func() {
		close(g.done)
		g.snapshotIfGrown()
		var errs []error
		if err := g.raft.Shutdown().Error(); err != nil {
			errs = append(errs, fmt.Errorf("cannot shut down raft of group %d: %w", g.id, err))
		}
		g.stable.close() // the transport may still hand raft a heartbeat
		if err := g.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("cannot close log store of group %d: %w", g.id, err))
		}
		if err := g.blobs.Close(); err != nil {
			errs = append(errs, fmt.Errorf("cannot close log segments of group %d: %w", g.id, err))
		}
		g.node.removeGroup(g)
		g.closeErr = errors.Join(errs...)
	})
	return g.closeErr
}

// snapshotIfGrown takes a snapshot when the applied log has grown since the
// last snapshot by at least SnapshotThreshold/4 entries or SnapshotBytes/4
// bytes of commands, so that a restart replays little. Best effort. Bytes
// count because batches and group commits put hundreds of writes in an
// entry: a million atoms written in 500-item batches are ~2,000 entries,
// and replaying up to half a snapshot's size through apply (write gates
// included) took a restart of 1M atoms tens of seconds longer than
// restoring a snapshot does.
func (g *Group) snapshotIfGrown() {
	var last uint64
	metas, err := g.snaps.List()
	if err == nil && len(metas) > 0 {
		last = metas[0].Index
	}
	if g.raft.AppliedIndex() < last+g.cfg.SnapshotThreshold/4 && g.fsm.sinceSnap.Load() < g.cfg.SnapshotBytes/4 {
		return
	}
	if err := g.raft.Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		g.log.Warn("cannot snapshot group on close", "err", err)
	}
}

// raftError maps raft's errors onto the package's sentinels, keeping the
// original in the chain.
func raftError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
		errors.Is(err, raft.ErrLeadershipTransferInProgress), errors.Is(err, raft.ErrAbortedByRestore):
		return fmt.Errorf("%w: %w", ErrNotLeader, err)
	case errors.Is(err, raft.ErrRaftShutdown), errors.Is(err, raft.ErrTransportShutdown):
		return fmt.Errorf("%w: %w", ErrShutdown, err)
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return err
}

// ctxError is the error of a finished context: ErrTimeout for a deadline.
func ctxError(ctx context.Context) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return err
}

func withDefaultTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, DefaultTimeout)
}

// untilDeadline is the raft enqueue timeout matching ctx (which has one).
func untilDeadline(ctx context.Context) time.Duration {
	dl, _ := ctx.Deadline()
	return max(time.Until(dl), time.Millisecond)
}
