package cluster

import (
	"errors"
	"fmt"
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
