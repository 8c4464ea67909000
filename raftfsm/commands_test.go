package raftfsm

import (
	"bytes"
	"math"
	"reflect"
	"testing"
)

func TestCommandRoundTrip(t *testing.T) {
	full := WriteItem{ID: mkID(1), CreatedAt: -5, Content: "héllo\x00wörld", Concepts: []string{"a", "", "ß"},
		Domain: "xroom:room_1", Metadata: []byte(`{"k":[1,2]}`), Fingerprint: "fp", ExternalRef: "ref",
		Supersedes: []ID{mkID(2), mkID(3)}, Type: Singleton, Sealed: []byte{0, 1, 2},
		Provenance: &Provenance{Principal: "p", Agent: "a", ClientEnv: "e", IsExternal: true, RecordedAt: 42},
		Vector:     []float32{1, -0.5, float32(math.Inf(1)), 0, float32(math.SmallestNonzeroFloat32)}}
	tests := []struct {
		name string
		cmd  command
	}{
		{"write with every field", &WriteCmd{Tenant: "org", Items: []WriteItem{full}}},
		{"write batch", &WriteCmd{Tenant: "org", Batch: true, Items: []WriteItem{full, {ID: mkID(9), Vector: []float32{1}}}}},
		{"write of nothing", &WriteCmd{Tenant: "", Items: []WriteItem{}}},
		{"secret", &WriteCmd{Tenant: "org", Items: []WriteItem{{ID: mkID(4), Type: Secret, ExternalRef: "secret:x", Sealed: []byte("s")}}}},
		{"secret keeping its context", &WriteCmd{Tenant: "org", Limit: 7, Items: []WriteItem{{ID: mkID(4), Type: Secret,
			ExternalRef: "secret:x", Sealed: []byte("s"), KeepContent: true}}}},
		{"touch", &TouchCmd{Tenant: "org", IDs: []ID{mkID(1), mkID(1)}, At: 1 << 60}},
		{"touch nothing", &TouchCmd{Tenant: "org"}},
		{"feedback", &FeedbackCmd{Tenant: "org", IDs: []ID{mkID(7)}, Outcome: -0.75, Concepts: []string{"x"},
			QueryConcepts: []string{"y", "z"}, At: 99}},
		{"delete atom", &DeleteAtomCmd{Tenant: "org", ID: mkID(5)}},
		{"delete domain", &DeleteDomainCmd{Tenant: "org", Domain: "a/b"}},
		{"reset", &ResetCmd{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkRoundTrip(t, tc.cmd)
		})
	}
}

// checkRoundTrip decodes the encoding of c and compares it with c, with
// empty slices normalised to nil as the decoder returns them.
func checkRoundTrip(t testing.TB, c command) {
	t.Helper()
	b := c.Encode()
	got := decodeCommand(b)
	if !reflect.DeepEqual(got, normalise(c)) {
		t.Fatalf("decode(encode(c)) =\n  %+v\nwant\n  %+v", got, c)
	}
	if again := got.(command).Encode(); !bytes.Equal(again, b) {
		t.Fatal("re-encoding changed the bytes")
	}
}

func normalise(c command) command {
	switch c := c.(type) {
	case *WriteCmd:
		n := *c
		n.Items = make([]WriteItem, len(c.Items))
		for i, it := range c.Items {
			it.Concepts = nilIfEmpty(it.Concepts)
			it.Supersedes = nilIfEmpty(it.Supersedes)
			it.Metadata = nilIfEmpty(it.Metadata)
			it.Sealed = nilIfEmpty(it.Sealed)
			it.Vector = nilIfEmpty(it.Vector)
			n.Items[i] = it
		}
		return &n
	case *TouchCmd:
		n := *c
		n.IDs = nilIfEmpty(n.IDs)
		return &n
	case *FeedbackCmd:
		n := *c
		n.IDs, n.Concepts, n.QueryConcepts = nilIfEmpty(n.IDs), nilIfEmpty(n.Concepts), nilIfEmpty(n.QueryConcepts)
		return &n
	}
	return c
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestDecodeCommandPanicsOnGarbage(t *testing.T) {
	valid := (&WriteCmd{Tenant: "org", Items: []WriteItem{{ID: mkID(1), Content: "x", Vector: []float32{1, 2}}}}).Encode()
	for name, b := range map[string][]byte{
		"empty":        nil,
		"unknown type": {0xee},
		"truncated":    valid[:len(valid)-3],
		"bad length":   {cmdDeleteDomain, 0x05, 'a'},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			New(testDim).Apply(1, b)
		})
	}
}

// FuzzDecodeCommand feeds only encodings of valid commands: decodeCommand
// panics on garbage by design. The fuzzer explores generator seeds.
func FuzzDecodeCommand(f *testing.F) {
	for seed := range int64(8) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		g := newGen(seed, 1+int(uint64(seed)%17))
		for range 20 {
			checkRoundTrip(t, g.command())
		}
	})
}

// TestWriteCmdOlderEncodings replays write commands as earlier versions
// wrote them: without the idempotency and limit fields.
func TestWriteCmdOlderEncodings(t *testing.T) {
	c := &WriteCmd{Tenant: "t", Items: []WriteItem{{Content: "x", Vector: []float32{1}}}}
	full := c.Encode()
	for _, cut := range []int{2, 1} { // without Limit (1 varint byte), without Idem flag too
		old := full[:len(full)-cut]
		got, ok := decodeCommand(old).(*WriteCmd)
		if !ok || got.Tenant != "t" || len(got.Items) != 1 || got.Idem != nil || got.Limit != 0 {
			t.Fatalf("older encoding (%d bytes shorter) decoded as %+v", cut, got)
		}
	}
}
