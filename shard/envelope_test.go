package shard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

func TestEnvelopeRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		cmds [][]byte
	}{
		{"one command", [][]byte{[]byte("a=1")}},
		{"several", [][]byte{[]byte("a=1"), []byte("b=2"), []byte("a=3")}},
		{"empty command", [][]byte{[]byte("a=1"), {}, []byte("c=3")}},
		{"command starting with the marker", [][]byte{{envelopeMarker, 1, 0}, []byte("b=2")}},
		{"long command (two-byte length)", [][]byte{bytes.Repeat([]byte("x"), 300), []byte("y")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := encodeEnvelope(tt.cmds)
			if !isEnvelope(b) {
				t.Fatalf("isEnvelope(%x) = false", b)
			}
			got, err := decodeEnvelope(b)
			if err != nil {
				t.Fatalf("decodeEnvelope: %v", err)
			}
			if !slices.EqualFunc(got, tt.cmds, bytes.Equal) {
				t.Fatalf("decoded %q, want %q", got, tt.cmds)
			}
			// Commands alias the entry but cannot grow into each other.
			if len(got) > 1 {
				next := slices.Clone(got[1])
				_ = append(got[0], 0xAA, 0xBB)
				if !bytes.Equal(got[1], next) {
					t.Fatalf("appending to command 0 changed command 1")
				}
			}
		})
	}
}

func TestNeedsEnvelope(t *testing.T) {
	f := func(cmds [][]byte, want bool) {
		t.Helper()
		if got := needsEnvelope(cmds); got != want {
			t.Errorf("needsEnvelope(%q) = %v, want %v", cmds, got, want)
		}
	}
	f([][]byte{[]byte("a=1")}, false)
	f([][]byte{{}}, false)
	f([][]byte{{1, 2, 3}}, false) // a raftfsm command
	f([][]byte{{envelopeMarker}}, true)
	f([][]byte{[]byte("a=1"), []byte("b=2")}, true)
}

func TestDecodeEnvelopeRejectsMalformed(t *testing.T) {
	valid := encodeEnvelope([][]byte{[]byte("a=1"), []byte("bb=22")})
	huge := binary.AppendUvarint([]byte{envelopeMarker, envelopeVersion}, 1<<62)
	tests := []struct {
		name string
		data []byte
	}{
		{"nil", nil},
		{"marker only", []byte{envelopeMarker}},
		{"not an envelope", []byte("a=1")},
		{"unknown version", []byte{envelopeMarker, 2, 1, 1, 'x'}},
		{"no count", []byte{envelopeMarker, envelopeVersion}},
		{"count overflows", append([]byte{envelopeMarker, envelopeVersion}, bytes.Repeat([]byte{0xFF}, 11)...)},
		{"zero commands", []byte{envelopeMarker, envelopeVersion, 0}},
		{"count beyond the bytes", append(huge, 1, 'x')},
		{"count above the commands", []byte{envelopeMarker, envelopeVersion, 3, 1, 'x', 1, 'y'}},
		{"truncated length", []byte{envelopeMarker, envelopeVersion, 1, 0x80}},
		{"length past the end", []byte{envelopeMarker, envelopeVersion, 1, 5, 'a', 'b'}},
		{"huge length", append([]byte{envelopeMarker, envelopeVersion, 1}, binary.AppendUvarint(nil, 1<<63)...)},
		{"trailing bytes", append(slices.Clone(valid), 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if cmds, err := decodeEnvelope(tt.data); !errors.Is(err, errBadEnvelope) {
				t.Fatalf("decodeEnvelope(%x) = %q, %v; want errBadEnvelope", tt.data, cmds, err)
			}
		})
	}
	t.Run("every truncation", func(t *testing.T) {
		for n := range len(valid) {
			if _, err := decodeEnvelope(valid[:n]); !errors.Is(err, errBadEnvelope) {
				t.Errorf("decodeEnvelope(first %d of %d bytes): %v", n, len(valid), err)
			}
		}
	})
}

func FuzzDecodeEnvelope(f *testing.F) {
	f.Add(encodeEnvelope([][]byte{[]byte("a=1")}))
	f.Add(encodeEnvelope([][]byte{[]byte("a=1"), {}, {envelopeMarker}}))
	f.Add([]byte{envelopeMarker, envelopeVersion, 2, 1, 'x'})
	f.Fuzz(func(t *testing.T, data []byte) {
		cmds, err := decodeEnvelope(data)
		if err != nil {
			return
		}
		if len(cmds) == 0 {
			t.Fatalf("decodeEnvelope(%x) accepted no commands", data)
		}
		again, err := decodeEnvelope(encodeEnvelope(cmds))
		if err != nil || !slices.EqualFunc(again, cmds, bytes.Equal) {
			t.Fatalf("re-encoding %q decodes to %q, %v", cmds, again, err)
		}
	})
}
