package raftfsm

import (
	"errors"
	"io"
)

// readChunkMin and readChunkMax bound the chunks readAll reads a snapshot
// of unknown size in: they double from the first to the last.
const (
	readChunkMin = 1 << 20
	readChunkMax = 64 << 20
)

// readAll reads r to its end into one buffer: in chunks that double from
// readChunkMin to readChunkMax, joined once at the end. A snapshot is
// gigabytes at a million atoms, and io.ReadAll regrows and copies its buffer
// dozens of times on the way (zeroing and faulting in those buffers, with
// the collector waiting on them, was most of a 50 s restart at 1M atoms).
// Snapshots of a known size are not read whole at all (window).
func readAll(r io.Reader) ([]byte, error) {
	var chunks [][]byte
	total := 0
	for size := readChunkMin; ; size = min(2*size, readChunkMax) {
		c, end, err := fill(r, make([]byte, size))
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, c)
		total += len(c)
		if !end {
			continue
		}
		if len(chunks) == 1 {
			return chunks[0], nil
		}
		b := make([]byte, 0, total)
		for _, c := range chunks {
			b = append(b, c...)
		}
		return b, nil
	}
}

// fill reads r into c until c is full or r ends (end), and returns what it
// read; any error but io.EOF is r's failure.
func fill(r io.Reader, c []byte) (read []byte, end bool, err error) {
	n := 0
	for n < len(c) {
		m, err := r.Read(c[n:])
		n += m
		switch {
		case errors.Is(err, io.EOF):
			return c[:n], true, nil
		case err != nil:
			return nil, false, err
		}
	}
	return c, false, nil
}
