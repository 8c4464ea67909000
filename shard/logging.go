package shard

import (
	"context"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// newHCLogger returns the hclog logger given to raft: Warn level and above,
// written through to log.
func newHCLogger(log *slog.Logger) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:        "raft",
		Level:       hclog.Warn,
		Output:      hclogWriter{log: log, lines: peerLines},
		DisableTime: true,
	})
}

// hclogWriter turns each line hclog writes ("[WARN]  raft: msg: k=v") into
// one slog record of the matching level.
type hclogWriter struct {
	log   *slog.Logger
	lines *lineThrottle // the repeated lines let through: peerLines, shared by every group
}

var hclogLevels = []struct {
	prefix string
	level  slog.Level
}{
	{"[ERROR]", slog.LevelError},
	{"[WARN]", slog.LevelWarn},
	{"[INFO]", slog.LevelInfo},
	{"[DEBUG]", slog.LevelDebug},
	{"[TRACE]", slog.LevelDebug},
}

func (w hclogWriter) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	level := slog.LevelWarn
	for _, l := range hclogLevels {
		if rest, ok := strings.CutPrefix(line, l.prefix); ok {
			line, level = strings.TrimSpace(rest), l.level
			break
		}
	}
	key, repeats := peerFailure(line)
	level = routineLevel(level, line, repeats)
	if repeats {
		ok, left := w.lines.allow(key, time.Now())
		if !ok {
			return len(p), nil
		}
		if left > 0 {
			line += " repeats_not_logged=" + strconv.Itoa(left)
		}
	}
	w.log.Log(context.Background(), level, line)
	return len(p), nil
}

// routineLevel lowers the level raft gives lines about routine events, so
// that an operator's alert on ERROR means a fault: the election a starting
// node holds before it has known any leader, a restore cut short by a
// stop, a leader stepping down for a newer term (every leadership change,
// a handoff included), a connection cut by this node's own stop (INFO);
// and a peer that cannot be reached (WARN: worth a look, but a replicated
// group rides it out, and the node's membership reports the peer's state).
func routineLevel(level slog.Level, line string, peerFailure bool) slog.Level {
	switch {
	case level == slog.LevelWarn && firstElection(line),
		level == slog.LevelError && stoppedRestore(line),
		level == slog.LevelError && strings.HasPrefix(line, "raft: peer has newer term, stopping replication"),
		level == slog.LevelError && strings.HasPrefix(line, "raft: failed to decode incoming command") &&
			strings.Contains(line, "transport shutdown"):
		return slog.LevelInfo
	case level == slog.LevelError && peerFailure:
		return slog.LevelWarn
	}
	return level
}

// stoppedRestore reports whether line is raft's failure to restore a
// snapshot because the node is stopping (the state machine's
// ErrRestoreStopped, raftfsm): a stop during a start, not a fault.
func stoppedRestore(line string) bool {
	return strings.HasPrefix(line, "raft: failed to restore snapshot") &&
		strings.Contains(line, "restore stopped: the node is stopping")
}

// Raft's lines about a peer it cannot reach repeat for every group at every
// heartbeat and retry: about 20 ERROR lines a second for one dead peer of
// a three-node cluster. The first of each kind and peer is logged, then one
// per peerLineEvery with the count of those left out.
var (
	peerFailureKinds = []string{"raft: failed to heartbeat to", "raft: failed to appendEntries to",
		"raft: failed to make requestVote RPC", "raft: failed to contact", "raft: failed to decode incoming command"}
	peerField = regexp.MustCompile(`(?:peer|target|server-id|remote-address)=("[^"]*"|\S+)`)
	peerLines = &lineThrottle{every: peerLineEvery, seen: map[string]*throttled{}}
)

const peerLineEvery = 30 * time.Second

// peerFailure reports whether line is one of those repeated lines, and its
// kind and peer as the throttle's key.
func peerFailure(line string) (key string, ok bool) {
	for _, k := range peerFailureKinds {
		if strings.HasPrefix(line, k) {
			return k + " " + peerField.FindString(line), true
		}
	}
	return "", false
}

// lineThrottle lets a key's line through once per every.
type lineThrottle struct {
	every time.Duration
	mu    sync.Mutex
	seen  map[string]*throttled
}

type throttled struct {
	at   time.Time // when a line last went through
	left int       // lines left out since
}

// allow reports whether the key's line goes through at now, and how many
// were left out before it.
func (t *lineThrottle) allow(key string, now time.Time) (bool, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.seen[key]
	if s == nil {
		if len(t.seen) > 4096 { // peers come and go: forget them all rather than grow
			clear(t.seen)
		}
		t.seen[key] = &throttled{at: now}
		return true, 0
	}
	if now.Sub(s.at) < t.every {
		s.left++
		return false, 0
	}
	left := s.left
	s.at, s.left = now, 0
	return true, left
}

// firstElection reports whether line is raft's warning that it starts an
// election without ever having known a leader: what every group of a
// starting node does (a single-node server's on each start), not a lost
// leader, which raft names (last-leader-addr=host:port).
func firstElection(line string) bool {
	return strings.Contains(line, "heartbeat timeout reached, starting election") &&
		(strings.Contains(line, "last-leader-addr= ") || strings.HasSuffix(line, "last-leader-addr="))
}
