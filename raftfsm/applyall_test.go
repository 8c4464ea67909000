package raftfsm

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"runtime"
	"testing"
)

// TestApplyAllMatchesOneByOne applies envelopes of commands to one state
// machine with ApplyAll and to another command by command, and compares
// every result and the state hash. Most commands are single writes (runs
// ApplyAll gates as one batch), among them duplicates of stored rows and of
// earlier writes of the run, repeated external_refs, secrets, writes with
// an idempotency key, supersedes, writes of another tenant and touches,
// which end or interrupt a run.
func TestApplyAllMatchesOneByOne(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, coded := range []int{1 << 30, 48} {
		t.Run(fmt.Sprintf("codedRows=%d", coded), func(t *testing.T) {
			withCodedRows(t, coded)
			const dim = 32
			rng := rand.New(rand.NewSource(int64(coded)))
			c := &batchCase{rng: rng, dim: dim, domains: []string{"a", "b", "c"}}
			for range 4 {
				c.centres = append(c.centres, randomUnit(rng, dim))
			}
			together, alone := New(dim), New(dim)
			var stored []ID
			merged := 0
			for e := range 30 {
				cmds := envelope(c, rng, stored)
				got := together.ApplyAll(uint64(e+1), encodeAll(cmds))
				for i, cmd := range cmds {
					want := alone.Apply(uint64(e+1), cmd.Encode())
					if !reflect.DeepEqual(got[i], want) {
						t.Fatalf("envelope %d command %d (%T): %+v, want %+v", e, i, cmd, got[i], want)
					}
					if w, ok := want.(*WriteResults); ok {
						for _, r := range w.Results {
							if r.Stored {
								stored = append(stored, r.AtomID)
							}
						}
					}
				}
				merged += together.mergeableRuns(cmds)
				if together.StateHash() != alone.StateHash() {
					t.Fatalf("envelope %d: states differ", e)
				}
			}
			if merged < 20 {
				t.Fatalf("only %d runs applied as batches", merged)
			}
		})
	}
}

// envelope returns 10 to 40 commands, most of them single writes.
func envelope(c *batchCase, rng *rand.Rand, stored []ID) []command {
	var cmds []command
	for range 10 + rng.Intn(31) {
		it := c.item()
		cmd := &WriteCmd{Tenant: "org", Items: []WriteItem{it}}
		switch r := rng.Intn(40); {
		case r == 0:
			cmd.Tenant = "other"
		case r == 1:
			cmd.Idem = &Idempotency{Key: fmt.Sprint("key", rng.Intn(5)), ExpiresAt: baseTime * 2}
		case r == 2 && len(stored) > 0 && it.Type != Secret:
			cmd.Items[0].Supersedes = []ID{stored[rng.Intn(len(stored))]}
		case r == 3 && len(stored) > 0:
			cmds = append(cmds, &TouchCmd{Tenant: "org", IDs: []ID{stored[rng.Intn(len(stored))]}, At: it.CreatedAt})
			continue
		case r == 4 && rng.Intn(2) == 0:
			cmds = append(cmds, &WriteCmd{Tenant: "org", Items: []WriteItem{it, c.item()}})
			continue
		}
		cmds = append(cmds, cmd)
	}
	return cmds
}

func encodeAll(cmds []command) [][]byte {
	out := make([][]byte, len(cmds))
	for i, c := range cmds {
		out[i] = c.Encode()
	}
	return out
}

// mergeableRuns counts the runs of cmds ApplyAll takes as one batch.
func (f *FSM) mergeableRuns(cmds []command) int {
	decoded := make([]any, len(cmds))
	for i, c := range cmds {
		decoded[i] = decodeCommand(c.Encode())
	}
	runs := 0
	for i := 0; i < len(decoded); {
		n := max(f.mergeable(decoded[i:]), 1)
		if n > 1 {
			runs++
		}
		i += n
	}
	return runs
}

// TestApplyAllAtomLimit: a run of single writes near the account's atom
// limit is cut where a write could pass it, so the writes past the limit
// are refused as one by one.
func TestApplyAllAtomLimit(t *testing.T) {
	const dim = 8
	together, alone := New(dim), New(dim)
	var cmds []command
	for i := range 6 {
		it := WriteItem{ID: mkID(i + 1), CreatedAt: baseTime + int64(i), Content: fmt.Sprint("w", i),
			Domain: "d", Vector: oneHotDim(i, dim)}
		cmds = append(cmds, &WriteCmd{Tenant: "org", Items: []WriteItem{it}, Limit: 4})
	}
	got := together.ApplyAll(1, encodeAll(cmds))
	refused := 0
	for i, cmd := range cmds {
		want := alone.Apply(1, cmd.Encode())
		if !reflect.DeepEqual(got[i], want) {
			t.Fatalf("command %d: %+v, want %+v", i, got[i], want)
		}
		if want.(*WriteResults).Err != nil {
			refused++
		}
	}
	if refused != 2 {
		t.Fatalf("%d writes refused, want 2", refused)
	}
	if together.StateHash() != alone.StateHash() {
		t.Fatal("states differ")
	}
}

func oneHotDim(i, dim int) []float32 {
	v := make([]float32, dim)
	v[i%dim] = 1
	return v
}

// TestLimitRefusalNotRemembered: a one-item batch with an idempotency key
// refused at the atom limit keeps no record of the key (it was kept as an
// empty result, so a retry with room again replayed nothing).
func TestLimitRefusalNotRemembered(t *testing.T) {
	const dim = 8
	f := New(dim)
	write := func(i int, limit int64) *WriteResults {
		it := WriteItem{ID: mkID(i + 1), CreatedAt: baseTime + int64(i), Content: fmt.Sprint("w", i),
			Domain: "d", Vector: oneHotDim(i, dim)}
		cmd := &WriteCmd{Tenant: "org", Batch: true, Items: []WriteItem{it}, Limit: limit,
			Idem: &Idempotency{Key: fmt.Sprint("key-", i), ExpiresAt: baseTime + 1e12}}
		return f.Apply(uint64(i+1), cmd.Encode()).(*WriteResults)
	}
	if res := write(0, 1); res.Err != nil {
		t.Fatalf("first write: %v", res.Err)
	}
	if res := write(1, 1); res.Err == nil || !errors.Is(res.Err, ErrLimit) {
		t.Fatalf("write past the limit: %+v", res)
	}
	if res := write(1, 10); res.Err != nil || len(res.Results) != 1 || !res.Results[0].Stored {
		t.Fatalf("retry with room: %+v", res)
	}
}
