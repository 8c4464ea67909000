package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hebbdb/hebb/shard"
)

// A command the leader could not write to its log is ErrStorage for the
// router, whether the leader is this node or answered over RPC, and not
// ErrUnavailable ("no leader answered").
func TestStorageErrors(t *testing.T) {
	local := fmt.Errorf("cannot propose to group 3: %w: %w", shard.ErrStorage, errors.New("no space left on device"))
	remote := errorOf(kindOf(local), local.Error())
	for name, err := range map[string]error{"local": local, "remote": remote} {
		got := unavailable(err)
		if !errors.Is(got, ErrStorage) || errors.Is(got, ErrUnavailable) {
			t.Errorf("%s: unavailable(%v) = %v, want ErrStorage alone", name, err, got)
		}
	}
	if got := unavailable(fmt.Errorf("%w: lost", shard.ErrNotLeader)); !errors.Is(got, ErrUnavailable) || errors.Is(got, ErrStorage) {
		t.Errorf("not leader: %v", got)
	}
}

// A proposal the leader took but did not confirm, locally or over RPC, or
// whose answer was lost, may have been applied (ErrOutcomeUnknown, with
// ErrUnavailable); one refused before the log, or never delivered, was not.
func TestMaybeApplied(t *testing.T) {
	timeout := fmt.Errorf("cannot propose to group 3: %w: outcome unknown: leadership lost", shard.ErrTimeout)
	for name, tc := range map[string]struct {
		err     error
		unknown bool
	}{
		"leadership lost here":     {timeout, true},
		"leadership lost remotely": {errorOf(kindOf(timeout), timeout.Error()), true},
		"leader stopped":           {fmt.Errorf("cannot propose to group 3: %w", shard.ErrShutdown), true},
		"answer lost":              {fmt.Errorf("%w: %w from 127.0.0.1:7000: EOF", ErrUnavailable, errNoAnswer), true},
		"not the leader":           {fmt.Errorf("%w: transfer in progress", shard.ErrNotLeader), false},
		"never dialled":            {fmt.Errorf("%w: %w: cannot reach x", ErrUnavailable, errDial), false},
		"disk full":                {fmt.Errorf("%w: no space", shard.ErrStorage), false},
	} {
		got := maybeApplied(unavailable(tc.err))
		if errors.Is(got, ErrOutcomeUnknown) != tc.unknown {
			t.Errorf("%s: %v, outcome unknown %v, want %v", name, got, !tc.unknown, tc.unknown)
		}
		if tc.unknown && !errors.Is(got, ErrUnavailable) {
			t.Errorf("%s: %v does not carry ErrUnavailable", name, got)
		}
	}
}

// A node's id survives restarts; a data dir that holds a cluster but lost
// its id file does not start under a new one.
func TestNodeIDFile(t *testing.T) {
	dir := t.TempDir()
	id, err := nodeID(Config{DataDir: dir})
	if err != nil || !strings.HasPrefix(id, "node-") {
		t.Fatalf("first id: %q %v", id, err)
	}
	if again, err := nodeID(Config{DataDir: dir}); err != nil || again != id {
		t.Fatalf("id after a restart: %q %v, want %q", again, err, id)
	}
	if err := os.MkdirAll(filepath.Join(dir, "raft", "group-0"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "raft", "group-0", "raft.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "node-id"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := nodeID(Config{DataDir: dir}); err == nil {
		t.Fatalf("an empty id file in a data dir with a cluster gave %q", got)
	}
	if got, err := nodeID(Config{DataDir: dir, NodeID: id}); err != nil || got != id {
		t.Fatalf("--node-id: %q %v", got, err)
	}
}
