package shard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/hashicorp/raft"
)

// Raft's file snapshot store keeps each snapshot in a directory of its
// own: the metadata with the CRC-64 (ECMA) of the state, and the state.
// openVerified reads that layout (hashicorp/raft v1.7, file_snapshot.go).
const (
	snapMetaFile  = "meta.json"
	snapStateFile = "state.bin"
)

// ErrSnapshotCorrupt is a snapshot whose state does not match its
// metadata: another CRC, or another length.
var ErrSnapshotCorrupt = errors.New("snapshot state does not match its metadata")

// Chunks the verifying reader reads ahead of its consumer.
const (
	verifyChunk  = 1 << 20
	verifyChunks = 4
)

var snapCRCTable = crc64.MakeTable(crc64.ECMA)

// openVerified opens snapshot id of the file snapshot store in dir as
// raft's FileSnapshotStore.Open does, without its pass over the whole state
// to check the CRC before returning the first byte: a restart read a 2.2 GB
// state twice, the first time (1.9 s from the page cache, a second disk
// read on a cold one) only for the CRC. Here a goroutine reads the state
// ahead of the consumer and computes the CRC as it goes; the reader
// returns ErrSnapshotCorrupt instead of the last chunk when the CRC or the
// length is wrong, so a consumer never sees a corrupt state whole: a
// restore fails before its end (raft then tries an older snapshot), and a
// snapshot sent to a follower arrives short.
func openVerified(dir, id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	path := filepath.Join(dir, id)
	raw, err := os.ReadFile(filepath.Join(path, snapMetaFile))
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read snapshot %s metadata: %w", id, err)
	}
	var meta struct {
		raft.SnapshotMeta
		CRC []byte
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, nil, fmt.Errorf("cannot decode snapshot %s metadata: %w", id, err)
	}
	fh, err := os.Open(filepath.Join(path, snapStateFile))
	if err != nil {
		return nil, nil, fmt.Errorf("cannot open snapshot %s state: %w", id, err)
	}
	r := &verifiedReader{fh: fh, chunks: make(chan verifiedChunk, verifyChunks),
		free: make(chan []byte, verifyChunks), stop: make(chan struct{}), done: make(chan struct{})}
	for range verifyChunks {
		r.free <- make([]byte, verifyChunk)
	}
	go r.fill(id, meta.Size, meta.CRC)
	return &meta.SnapshotMeta, r, nil
}

// verifiedReader is openVerified's reader: fill reads the state into
// chunks, Read hands them out.
type verifiedReader struct {
	fh      *os.File
	chunks  chan verifiedChunk
	free    chan []byte // chunks' buffers, back from Read
	buf     []byte      // the buffer of the chunk Read is handing out
	cur     []byte      // its bytes not yet read
	err     error       // what Read returns once the chunks run out
	stop    chan struct{}
	done    chan struct{} // fill has returned
	closing sync.Once
}

// verifiedChunk is state bytes, or the end of the state (err: io.EOF, or
// why it is not to be trusted).
type verifiedChunk struct {
	b   []byte
	err error
}

// fill reads the state, size bytes of CRC want, and sends it in chunks,
// then io.EOF; the last chunk only if the CRC and the length match.
func (r *verifiedReader) fill(id string, size int64, want []byte) {
	defer close(r.done)
	h := crc64.New(snapCRCTable)
	var read int64
	for {
		var buf []byte
		select {
		case buf = <-r.free:
		case <-r.stop:
			return
		}
		n, err := io.ReadFull(r.fh, buf[:min(int64(len(buf)), max(size-read, 0))])
		h.Write(buf[:n])
		read += int64(n)
		var end error
		switch {
		case err != nil:
			end = fmt.Errorf("cannot read snapshot %s state (%d of %d bytes read): %w", id, read, size, err)
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				end = fmt.Errorf("%w: snapshot %s state ends after %d bytes, its metadata says %d", ErrSnapshotCorrupt, id, read, size)
			}
		case read == size:
			end = r.checkEnd(id, size, h.Sum(nil), want)
		}
		if end != nil && end != io.EOF {
			r.send(verifiedChunk{err: end}) // the last chunk withheld
			return
		}
		if n > 0 && !r.send(verifiedChunk{b: buf[:n]}) {
			return
		}
		if end == io.EOF {
			r.send(verifiedChunk{err: io.EOF})
			return
		}
	}
}

// checkEnd returns io.EOF when the state, all size bytes of it read, ends
// there and has the CRC its metadata wants.
func (r *verifiedReader) checkEnd(id string, size int64, got, want []byte) error {
	var extra [1]byte
	if n, _ := r.fh.Read(extra[:]); n > 0 {
		return fmt.Errorf("%w: snapshot %s state is longer than the %d bytes its metadata says", ErrSnapshotCorrupt, id, size)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%w: snapshot %s state CRC %x, its metadata says %x", ErrSnapshotCorrupt, id, got, want)
	}
	return io.EOF
}

// send hands c to Read; false when the reader was closed.
func (r *verifiedReader) send(c verifiedChunk) bool {
	select {
	case r.chunks <- c:
		return true
	case <-r.stop:
		return false
	}
}

func (r *verifiedReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.buf != nil {
			r.free <- r.buf[:cap(r.buf)] // room: verifyChunks buffers in all
			r.buf = nil
		}
		c := <-r.chunks
		r.buf, r.cur, r.err = c.b, c.b, c.err
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// Close stops the reading goroutine and closes the state file.
func (r *verifiedReader) Close() error {
	r.closing.Do(func() { close(r.stop) })
	<-r.done
	return r.fh.Close()
}
