package shard

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// Raft's lines keep their level, but for routine events (INFO: the
// election a starting node holds before it has known any leader, a restore
// cut short by a stop, a step down for a newer term, a connection cut by
// this node's stop) and an unreachable peer (WARN).
func TestHCLogLevels(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"[WARN]  raft: heartbeat timeout reached, starting election: last-leader-addr= last-leader-id=", "INFO"},
		{"[WARN]  raft: heartbeat timeout reached, starting election: last-leader-addr=127.0.0.1:7000 last-leader-id=node-b", "WARN"},
		{"[WARN]  raft: failed to contact: server-id=node-b time=2.5s", "WARN"},
		{"[ERROR] raft: failed to appendEntries to: peer=node-levels-test", "WARN"},
		{`[ERROR] raft: failed to heartbeat to: peer=127.0.0.1:9101 backoff time=10ms error="cannot dial 127.0.0.1:9101: connection refused"`, "WARN"},
		{`[ERROR] raft: peer has newer term, stopping replication: peer="{Voter node-b 127.0.0.1:9103}"`, "INFO"},
		{`[ERROR] raft: failed to decode incoming command: error="transport shutdown"`, "INFO"},
		{`[ERROR] raft: failed to decode incoming command: error="gob: type mismatch"`, "WARN"},
		{`[ERROR] raft: failed to apply log entry: index=12`, "ERROR"},
		{`[ERROR] raft: failed to restore snapshot: id=2-4058-1 last-index=4058 error="cannot restore state machine: raftfsm: restore stopped: the node is stopping"`, "INFO"},
		{`[ERROR] raft: failed to restore snapshot: id=2-4058-1 last-index=4058 error="cannot restore state machine: raftfsm: bad snapshot: trailing bytes"`, "ERROR"},
	} {
		// A throttle of its own for each line: through a shared one, a
		// peer failure of the same kind logged in the last peerLineEvery
		// (by another case, an earlier -count run or another test) would
		// be held back and logged at no level.
		lines := &lineThrottle{every: peerLineEvery, seen: map[string]*throttled{}}
		var buf bytes.Buffer
		w := hclogWriter{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), lines: lines}
		if _, err := w.Write([]byte(tc.line + "\n")); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "level="+tc.want) {
			t.Errorf("%q logged as %s, want %s", tc.line, buf.String(), tc.want)
		}
	}
}

// A dead peer's heartbeat failures, repeated by every group, are logged
// once per peer and kind, then once per peerLineEvery with the count left
// out; another peer or another kind has its own line.
func TestPeerFailureLinesThrottled(t *testing.T) {
	th := &lineThrottle{every: time.Minute, seen: map[string]*throttled{}}
	at := time.Unix(1000, 0)
	line := `raft: failed to heartbeat to: peer=127.0.0.1:9103 backoff time=10ms error="dial tcp 127.0.0.1:9103: connect: connection refused"`
	key, ok := peerFailure(line)
	if !ok || !strings.Contains(key, "127.0.0.1:9103") {
		t.Fatalf("peerFailure(%q) = %q, %v", line, key, ok)
	}
	if ok, _ := th.allow(key, at); !ok {
		t.Fatal("the first line was held back")
	}
	for i := 1; i <= 50; i++ {
		if ok, _ := th.allow(key, at.Add(time.Duration(i)*100*time.Millisecond)); ok {
			t.Fatalf("repeat %d went through", i)
		}
	}
	other, _ := peerFailure(strings.ReplaceAll(line, "9103", "9102"))
	if ok, _ := th.allow(other, at.Add(time.Second)); !ok {
		t.Error("another peer's first line was held back")
	}
	if ok, left := th.allow(key, at.Add(time.Minute+time.Second)); !ok || left != 50 {
		t.Errorf("after the interval: %v, %d left out, want true, 50", ok, left)
	}
	if _, ok := peerFailure("raft: entering follower state: follower=..."); ok {
		t.Error("an ordinary line counted as a peer failure")
	}
}
