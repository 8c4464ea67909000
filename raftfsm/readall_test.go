package raftfsm

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

type sized struct {
	io.Reader
	n int64
}

func (s sized) Size() int64 { return s.n }

// TestReadAll reads what io.ReadAll reads, with exact, short, long and no
// size hints, through readers that return a few bytes at a time, across
// the chunk sizes.
func TestReadAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 511, readChunkMin, readChunkMin + 1, 3*readChunkMin + 17} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		readers := map[string]func() io.Reader{
			"no hint":    func() io.Reader { return bytes.NewReader(data) },
			"half reads": func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
			"exact hint": func() io.Reader { return sized{bytes.NewReader(data), int64(n)} },
			"short hint": func() io.Reader { return sized{iotest.HalfReader(bytes.NewReader(data)), int64(n/2 + 1)} },
			"long hint":  func() io.Reader { return sized{bytes.NewReader(data), int64(2*n + 1)} },
		}
		for name, r := range readers {
			got, err := readAll(r())
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%d bytes, %s: %d bytes read, err %v", n, name, len(got), err)
			}
		}
	}
	boom := io.ErrUnexpectedEOF // a reader's own failure, not the end

	for name, r := range map[string]io.Reader{
		"no hint": iotest.ErrReader(boom), "hint": sized{iotest.ErrReader(boom), 10},
	} {
		if _, err := readAll(r); !errors.Is(err, boom) {
			t.Fatalf("%s: err %v, want boom", name, err)
		}
	}
}
