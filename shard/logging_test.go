package shard

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// Raft's lines keep their level, but for the election a starting node
// holds before it has known any leader: routine, so INFO.
func TestHCLogLevels(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"[WARN]  raft: heartbeat timeout reached, starting election: last-leader-addr= last-leader-id=", "INFO"},
		{"[WARN]  raft: heartbeat timeout reached, starting election: last-leader-addr=127.0.0.1:7000 last-leader-id=node-b", "WARN"},
		{"[WARN]  raft: failed to contact: server-id=node-b time=2.5s", "WARN"},
		{"[ERROR] raft: failed to appendEntries to: peer=node-b", "ERROR"},
	} {
		var buf bytes.Buffer
		w := hclogWriter{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		if _, err := w.Write([]byte(tc.line + "\n")); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "level="+tc.want) {
			t.Errorf("%q logged as %s, want %s", tc.line, buf.String(), tc.want)
		}
	}
}
