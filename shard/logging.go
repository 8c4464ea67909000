package shard

import (
	"context"
	"log/slog"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// newHCLogger returns the hclog logger given to raft: Warn level and above,
// written through to log.
func newHCLogger(log *slog.Logger) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:        "raft",
		Level:       hclog.Warn,
		Output:      hclogWriter{log: log},
		DisableTime: true,
	})
}

// hclogWriter turns each line hclog writes ("[WARN]  raft: msg: k=v") into
// one slog record of the matching level.
type hclogWriter struct {
	log *slog.Logger
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
	if level == slog.LevelWarn && firstElection(line) {
		level = slog.LevelInfo
	}
	w.log.Log(context.Background(), level, line)
	return len(p), nil
}

// firstElection reports whether line is raft's warning that it starts an
// election without ever having known a leader: what every group of a
// starting node does (a single-node server's on each start), not a lost
// leader, which raft names (last-leader-addr=host:port).
func firstElection(line string) bool {
	return strings.Contains(line, "heartbeat timeout reached, starting election") &&
		(strings.Contains(line, "last-leader-addr= ") || strings.HasSuffix(line, "last-leader-addr="))
}
