package raftfsm

import (
	"bytes"
	"errors"
	"io"
)

// readChunkMin and readChunkMax bound the chunks readAll reads a snapshot
// of unknown size in: they double from the first to the last.
const (
	readChunkMin = 1 << 20
	readChunkMax = 64 << 20
)

// readAll reads r to its end into one buffer. A snapshot is gigabytes at a
// million atoms, and io.ReadAll regrows and copies its buffer dozens of
// times on the way: zeroing and faulting in those buffers, with the
// collector waiting on them, was most of a 50 s restart at 1M atoms. When
// r tells its size (a Size() int64 method; the shard's restore at start
// does) the buffer is allocated once; otherwise r is read in chunks that
// are joined once at the end.
func readAll(r io.Reader) ([]byte, error) {
	if s, ok := r.(interface{ Size() int64 }); ok && s.Size() > 0 {
		return readSized(r, s.Size())
	}
	return readChunked(r)
}

// readSized reads r into a buffer with room for n bytes and the read that
// finds the end (bytes.MinRead), grown only if r holds more than n bytes.
func readSized(r io.Reader, n int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, n+bytes.MinRead))
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readChunked reads r in doubling chunks and joins them.
func readChunked(r io.Reader) ([]byte, error) {
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
