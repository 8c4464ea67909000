package shard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/raft"
)

// blobLog is a group's raft log store: raft-boltdb keeps every entry, but
// the data of a large command lives in a segment file beside raft.db and
// the entry in bbolt holds a reference to it (blobRef).
//
// bbolt keeps a value inline in its B+tree leaf, and a leaf of four entries
// or fewer never splits, so every commit rewrote the log's last leaf with up
// to four earlier entries: a 500-item batch (~920 kB) cost ~4.5 times its
// size in copies and page-cache writes (measured: 895 MB written for 200 MB
// of such entries). A segment is written once, appended to, and deleted
// whole when the log no longer refers to it.
//
// Durability: StoreLogs writes and fsyncs the segments before bbolt commits
// the references, so a committed reference always finds its data; a crash in
// between leaves unreferenced bytes at a segment's end, which nothing reads.
// A new segment's directory entry is synced before any reference to it.
type blobLog struct {
	raft.LogStore // raft-boltdb; its command entries may hold references
	dir           string
	wmu           sync.Mutex // serialises StoreLogs and DeleteRange
	mu            sync.RWMutex
	segs          map[uint64]*segment // guarded by mu
	cur           *segment            // the segment being appended to; wmu
	next          uint64              // the next segment's sequence number; wmu
}

// segment is one append-only file of command data. Its size and last are
// read and written under blobLog.wmu only.
type segment struct {
	seq  uint64
	f    *os.File
	size int64
	// last is the highest log index whose data it may hold: once the log's
	// first index is past it, no entry refers to it.
	last uint64
}

// Tunables; variables so tests can exercise rotation and references on
// small data.
var (
	// blobMinBytes is the size from which a command's data goes to a
	// segment; smaller entries stay in bbolt (a segment costs one more
	// fsync a commit).
	blobMinBytes = 32 << 10
	// segmentBytes is the size after which a new segment starts, so that
	// truncating the log frees disk space in steps of about this much.
	segmentBytes int64 = 64 << 20
)

// blobMarker starts a reference. No command starts with it (raftfsm uses
// 1-9, the meta group's commands stay below 64, envelopes 0xFF), so no
// entry written before references existed is mistaken for one; a command
// that does start with it is stored as a segment whatever its size, so that
// every stored entry starting with it is a reference.
const (
	blobMarker  byte = 0xFE
	blobVersion byte = 1
	segmentExt       = ".seg"
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// errBadBlob marks stored data that cannot be read back as written: a
// reference that cannot be resolved (a corrupt entry or segment, a missing
// segment file) or a sealed entry whose checksum fails (sealed.go).
var errBadBlob = errors.New("bad log data reference")

// errNoSegment is a reference to a segment that is not there.
var errNoSegment = fmt.Errorf("%w: missing segment", errBadBlob)

// openBlobLog wraps store, keeping segments under dir (created if needed).
func openBlobLog(dir string, store raft.LogStore) (*blobLog, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", dir, err)
	}
	b := &blobLog{LogStore: store, dir: dir, segs: map[uint64]*segment{}, next: 1}
	if err := b.load(); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// load opens the segments on disk. It cannot know which indexes each holds
// without reading the whole log, so each is kept until the log's first
// index passes its last index as of now; when the log is empty none is
// needed.
func (b *blobLog) load() error {
	names, err := os.ReadDir(b.dir)
	if err != nil {
		return fmt.Errorf("cannot list log segments: %w", err)
	}
	first, err := b.LogStore.FirstIndex()
	if err != nil {
		return fmt.Errorf("cannot read the first log index: %w", err)
	}
	last, err := b.LogStore.LastIndex()
	if err != nil {
		return fmt.Errorf("cannot read the last log index: %w", err)
	}
	for _, e := range names {
		seq, ok := segmentSeq(e.Name())
		if !ok {
			continue
		}
		b.next = max(b.next, seq+1)
		path := filepath.Join(b.dir, e.Name())
		if first == 0 {
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("cannot remove unused log segment: %w", err)
			}
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("cannot open log segment: %w", err)
		}
		b.segs[seq] = &segment{seq: seq, f: f, last: last}
	}
	return nil
}

func segmentName(seq uint64) string { return fmt.Sprintf("%016x%s", seq, segmentExt) }

func segmentSeq(name string) (uint64, bool) {
	hex, ok := strings.CutSuffix(name, segmentExt)
	if !ok || len(hex) != 16 {
		return 0, false
	}
	seq, err := strconv.ParseUint(hex, 16, 64)
	return seq, err == nil
}

// spills reports whether l's data goes to a segment.
func spills(l *raft.Log) bool {
	return l.Type == raft.LogCommand && len(l.Data) > 0 &&
		(len(l.Data) >= blobMinBytes || l.Data[0] == blobMarker)
}

func (b *blobLog) StoreLog(l *raft.Log) error { return b.StoreLogs([]*raft.Log{l}) }

// StoreLogs writes the large commands' data to segments, syncs them, then
// stores the entries, each with data sealed (sealEntry) around its data or
// its reference. The caller's entries are not modified (raft's log cache
// keeps them).
func (b *blobLog) StoreLogs(logs []*raft.Log) error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	stored := slices.Clone(logs)
	var dirty []*segment
	for i, l := range logs {
		if len(l.Data) == 0 {
			continue
		}
		payload := l.Data
		if spills(l) {
			ref, seg, err := b.append(l)
			if err != nil {
				return err
			}
			if len(dirty) == 0 || dirty[len(dirty)-1] != seg {
				dirty = append(dirty, seg)
			}
			payload = ref
		}
		c := *l
		c.Data = sealEntry(l, payload)
		stored[i] = &c
	}
	for _, seg := range dirty {
		if err := seg.f.Sync(); err != nil {
			return fmt.Errorf("cannot sync log segment: %w", err)
		}
	}
	return b.LogStore.StoreLogs(stored)
}

// append writes l's data at the end of the current segment (a new one when
// there is none or it is full) and returns its reference.
func (b *blobLog) append(l *raft.Log) ([]byte, *segment, error) {
	if b.cur == nil || b.cur.size > 0 && b.cur.size+int64(len(l.Data)) > segmentBytes {
		if err := b.rotate(); err != nil {
			return nil, nil, err
		}
	}
	seg := b.cur
	if _, err := seg.f.WriteAt(l.Data, seg.size); err != nil {
		return nil, nil, fmt.Errorf("cannot write log segment: %w", err)
	}
	ref := blobRef{seq: seg.seq, off: uint64(seg.size), n: uint64(len(l.Data)), crc: crc32.Checksum(l.Data, crcTable)}
	seg.size += int64(len(l.Data))
	seg.last = max(seg.last, l.Index)
	return ref.encode(), seg, nil
}

// rotate starts a new segment; the previous one is synced by the
// StoreLogs that wrote it, and stays open for reads.
func (b *blobLog) rotate() error {
	seq := b.next
	f, err := os.OpenFile(filepath.Join(b.dir, segmentName(seq)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("cannot create log segment: %w", err)
	}
	if err := SyncDir(b.dir); err != nil {
		f.Close()
		return err
	}
	b.next++
	seg := &segment{seq: seq, f: f}
	b.mu.Lock()
	b.segs[seq] = seg
	b.mu.Unlock()
	b.cur = seg
	return nil
}

// GetLog reads entry idx, its data from its segment when it holds a
// reference.
func (b *blobLog) GetLog(idx uint64, l *raft.Log) error {
	if err := b.LogStore.GetLog(idx, l); err != nil {
		return err
	}
	ref, err := unseal(l)
	if err != nil {
		return b.damaged(idx, err)
	}
	if ref == nil {
		return nil
	}
	data, err := b.resolve(ref)
	if errors.Is(err, errNoSegment) {
		// Deleted by a DeleteRange since the entry was read?
		if first, ferr := b.LogStore.FirstIndex(); ferr == nil && (first == 0 || idx < first) {
			return raft.ErrLogNotFound
		}
	}
	if err != nil {
		return b.damaged(idx, err)
	}
	l.Data = data
	return nil
}

// damaged is the error of entry idx found damaged on disk. Raft panics on
// it when the entry is one to apply, so the text that ends the process
// names the files and says what to do.
func (b *blobLog) damaged(idx uint64, err error) error {
	dir := filepath.Dir(b.dir)
	return fmt.Errorf("cannot read log entry %d of %s: %w; this node's copy of the log is damaged: %s",
		idx, dir, err, restartAdvice(filepath.Join(dir, "raft.db")))
}

// unseal checks and strips the seal of l as stored, in any of the forms
// binaries have written, and returns the segment reference that holds its
// data, if any.
func unseal(l *raft.Log) (ref []byte, err error) {
	switch {
	case len(l.Data) == 0:
		return nil, nil
	case l.Data[0] == entryMarker:
		if l.Data, err = openEntry(l); err != nil {
			return nil, err
		}
	case l.Type != raft.LogCommand:
		return nil, nil // stored before every entry was sealed
	case l.Data[0] == sumMarker:
		l.Data, err = openInline(l.Data)
		return nil, err
	}
	if l.Type == raft.LogCommand && len(l.Data) > 0 && l.Data[0] == blobMarker {
		return l.Data, nil
	}
	return nil, nil
}

// resolve reads and checks the data a reference points to.
func (b *blobLog) resolve(raw []byte) ([]byte, error) {
	ref, err := decodeBlobRef(raw)
	if err != nil {
		return nil, err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	seg := b.segs[ref.seq]
	if seg == nil {
		return nil, fmt.Errorf("%w: segment %s", errNoSegment, segmentName(ref.seq))
	}
	if ref.n > uint64(maxBlobBytes) {
		return nil, fmt.Errorf("%w: length %d", errBadBlob, ref.n)
	}
	data := make([]byte, ref.n)
	if _, err := seg.f.ReadAt(data, int64(ref.off)); err != nil {
		return nil, fmt.Errorf("%w: cannot read segment %s: %v", errBadBlob, segmentName(ref.seq), err)
	}
	if crc32.Checksum(data, crcTable) != ref.crc {
		return nil, fmt.Errorf("%w: checksum mismatch in segment %s", errBadBlob, segmentName(ref.seq))
	}
	return data, nil
}

// maxBlobBytes bounds a reference's length before memory is allocated for
// it: far above any entry (the proposer's envelopes stop at 4 MiB, a
// request body at its limit).
const maxBlobBytes = 1 << 30

// DeleteRange deletes entries [min, max], then the segments no remaining
// entry can refer to.
func (b *blobLog) DeleteRange(min, max uint64) error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	if err := b.LogStore.DeleteRange(min, max); err != nil {
		return err
	}
	first, err := b.LogStore.FirstIndex()
	if err != nil {
		return fmt.Errorf("cannot read the first log index: %w", err)
	}
	var unused []*segment
	b.mu.Lock()
	for seq, seg := range b.segs {
		if seg != b.cur && (first == 0 || seg.last < first) {
			unused = append(unused, seg)
			delete(b.segs, seq)
		}
	}
	b.mu.Unlock()
	for _, seg := range unused {
		seg.f.Close()
		if err := os.Remove(seg.f.Name()); err != nil {
			return fmt.Errorf("cannot remove log segment: %w", err)
		}
	}
	return nil
}

// Close closes the segment files (not the store beneath).
func (b *blobLog) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var errs []error
	for _, seg := range b.segs {
		errs = append(errs, seg.f.Close())
	}
	clear(b.segs)
	b.cur = nil
	return errors.Join(errs...)
}

// blobRef locates a command's data: segment, offset, length and the
// CRC-32C of the bytes. Encoded as blobMarker, blobVersion, three uvarints
// and the CRC (4 bytes, big-endian).
type blobRef struct {
	seq, off, n uint64
	crc         uint32
}

func (r blobRef) encode() []byte {
	b := make([]byte, 0, 2+3*binary.MaxVarintLen64+4)
	b = append(b, blobMarker, blobVersion)
	b = binary.AppendUvarint(b, r.seq)
	b = binary.AppendUvarint(b, r.off)
	b = binary.AppendUvarint(b, r.n)
	return binary.BigEndian.AppendUint32(b, r.crc)
}

func decodeBlobRef(b []byte) (blobRef, error) {
	var r blobRef
	if len(b) < 2 || b[0] != blobMarker || b[1] != blobVersion {
		return r, fmt.Errorf("%w: bad header", errBadBlob)
	}
	rest := b[2:]
	for _, v := range []*uint64{&r.seq, &r.off, &r.n} {
		x, n := binary.Uvarint(rest)
		if n <= 0 {
			return r, fmt.Errorf("%w: bad field", errBadBlob)
		}
		*v, rest = x, rest[n:]
	}
	if len(rest) != 4 {
		return r, fmt.Errorf("%w: bad length", errBadBlob)
	}
	r.crc = binary.BigEndian.Uint32(rest)
	return r, nil
}
