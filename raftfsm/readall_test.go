package raftfsm

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// TestReadAll reads what io.ReadAll reads, through readers that return all
// they can or a few bytes at a time, across the chunk sizes.
func TestReadAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 511, readChunkMin, readChunkMin + 1, 3*readChunkMin + 17} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		readers := map[string]func() io.Reader{
			"whole reads": func() io.Reader { return bytes.NewReader(data) },
			"half reads":  func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
		}
		for name, r := range readers {
			got, err := readAll(r())
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%d bytes, %s: %d bytes read, err %v", n, name, len(got), err)
			}
		}
	}
	boom := io.ErrUnexpectedEOF // a reader's own failure, not the end
	if _, err := readAll(iotest.ErrReader(boom)); !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
}
