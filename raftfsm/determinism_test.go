package raftfsm

import (
	"bytes"
	"fmt"
	"testing"
)

// commandLog generates n random commands as their encoded bytes.
func commandLog(seed int64, n int) ([]command, [][]byte) {
	g := newGen(seed, testDim)
	cmds := make([]command, n)
	log := make([][]byte, n)
	for i := range cmds {
		cmds[i] = g.command()
		log[i] = cmds[i].Encode()
	}
	return cmds, log
}

// TestAgainstModel applies random command sequences to the FSM and to the
// reference model and compares every apply result and, every 50 commands,
// the whole exported state.
func TestAgainstModel(t *testing.T) {
	stats := map[string]int{}
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			cmds, log := commandLog(seed, 1000)
			f, m := New(testDim), newModel()
			for i, c := range cmds {
				got, want := f.Apply(uint64(i+1), log[i]), m.apply(c)
				if d := diffResult(got, want); d != "" {
					t.Fatalf("command %d %T: %s", i, c, d)
				}
				countOutcome(stats, got)
				if i%50 == 49 || i == len(cmds)-1 {
					if d := m.diffState(f, []string{"t1", "t2"}); d != "" {
						t.Fatalf("after command %d: %s", i, d)
					}
				}
			}
		})
	}
	// The sequences must exercise the interesting paths, or the comparison
	// proves little.
	for _, k := range []string{"stored", "duplicate", "external_ref exists", "replaced",
		"superseded", "not found", "conflict", "forbidden", "deleted"} {
		if stats[k] < 3 {
			t.Errorf("too few %q outcomes in %v", k, stats)
		}
		if testing.Verbose() {
			t.Logf("%s: %d", k, stats[k])
		}
	}
}

func countOutcome(stats map[string]int, res any) {
	switch r := res.(type) {
	case *WriteResults:
		if r.Err != nil {
			stats[r.Err.Kind.Error()[len("raftfsm: "):]]++
		}
		for _, w := range r.Results {
			switch {
			case len(w.Superseded) > 0:
				stats["superseded"]++
			case w.Reason == "stored" || w.Reason == "replaced" || w.Reason == "external_ref exists":
				stats[w.Reason]++
			default:
				stats["duplicate"]++
			}
		}
	case *DeleteAtomResult:
		if r.Err != nil {
			stats["forbidden"]++
		}
		stats["deleted"] += r.Deleted
	}
}

// TestReplicasAgree feeds the same log to two state machines.
func TestReplicasAgree(t *testing.T) {
	for seed := int64(10); seed < 13; seed++ {
		_, log := commandLog(seed, 500)
		a, b := New(testDim), New(testDim)
		for i, cmd := range log {
			a.Apply(uint64(i+1), cmd)
			b.Apply(uint64(i+1), bytes.Clone(cmd))
			if i%100 == 99 && a.StateHash() != b.StateHash() {
				t.Fatalf("seed %d: replicas diverge after command %d", seed, i)
			}
		}
		if a.StateHash() != b.StateHash() {
			t.Fatalf("seed %d: replicas diverge", seed)
		}
		if a.StateHash() == New(testDim).StateHash() {
			t.Fatalf("seed %d: the log left no state", seed)
		}
	}
}

// TestSnapshotRestoreReplay snapshots at a random point, restores into a
// fresh state machine, replays the rest of the log on both and compares.
func TestSnapshotRestoreReplay(t *testing.T) {
	for seed := int64(20); seed < 26; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			_, log := commandLog(seed, 400)
			cut := int(seed*37) % len(log)
			live := New(testDim)
			for i, cmd := range log[:cut] {
				live.Apply(uint64(i+1), cmd)
			}
			snap := snapshotBytes(t, live)
			copy := restored(t, snap, testDim)
			if !bytes.Equal(snapshotBytes(t, copy), snap) {
				t.Fatal("restore then snapshot changed the bytes")
			}
			for i, cmd := range log[cut:] {
				live.Apply(uint64(cut+i+1), cmd)
				copy.Apply(uint64(cut+i+1), cmd)
			}
			if live.StateHash() != copy.StateHash() {
				t.Fatalf("restored replica diverges after replaying %d commands", len(log)-cut)
			}
			assertSameAsRestored(t, live)
		})
	}
}
