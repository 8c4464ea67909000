package shard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// bbolt's file header (go.etcd.io/bbolt, db.go and page.go): two meta pages
// at the start, each a 16-byte page header then the meta record, whose
// last field is an FNV-64a checksum of the record before it.
const (
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	boltPageHeader  = 16
	boltMetaSummed  = 56 // magic, version, page size, flags, root bucket (16), freelist, pgid, txid
	boltMetaBytes   = boltMetaSummed + 8
	boltDefaultPage = 4096
)

// boltMeta is the part of a bbolt meta record the check needs.
type boltMeta struct {
	pageSize uint32
	pages    uint64 // the high-water mark: the pages the file must hold
	txid     uint64
}

// checkLogFile refuses a raft.db shorter than its header says it is (a
// disk that lost its end, a copy cut short). bbolt opened such a file and
// then panicked on a goroutine of its own while reading the missing pages,
// taking the process down with a stack trace and no word of what to do. A
// missing or empty file, or one without a valid header, is left to the
// caller and bbolt (checkLostLog, bbolt's own errors).
func checkLogFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("cannot open %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("cannot inspect %s: %w", path, err)
	}
	m, ok := latestMeta(f)
	if !ok {
		return nil
	}
	if need := int64(m.pages) * int64(m.pageSize); st.Size() < need {
		return fmt.Errorf("%s is truncated: %d bytes where its header needs %d (the disk or a copy lost its end); "+
			"restore it from a backup, or move it aside to restart this group from its last snapshot "+
			"(writes after that snapshot are then lost on this node; in a cluster its other replicas still hold them)",
			path, st.Size(), need)
	}
	return nil
}

// latestMeta returns the valid meta record with the highest transaction id.
func latestMeta(r io.ReaderAt) (boltMeta, bool) {
	m0, ok0 := readBoltMeta(r, 0)
	page := int64(boltDefaultPage)
	if ok0 {
		page = int64(m0.pageSize)
	}
	m1, ok1 := readBoltMeta(r, page)
	switch {
	case ok0 && ok1 && m1.txid > m0.txid, !ok0 && ok1:
		return m1, true
	case ok0:
		return m0, true
	}
	return boltMeta{}, false
}

func readBoltMeta(r io.ReaderAt, off int64) (boltMeta, bool) {
	var b [boltPageHeader + boltMetaBytes]byte
	if _, err := r.ReadAt(b[:], off); err != nil {
		return boltMeta{}, false
	}
	rec := b[boltPageHeader:]
	le := binary.LittleEndian
	h := fnv.New64a()
	h.Write(rec[:boltMetaSummed])
	if le.Uint32(rec[0:]) != boltMagic || le.Uint32(rec[4:]) != boltVersion || le.Uint64(rec[boltMetaSummed:]) != h.Sum64() {
		return boltMeta{}, false
	}
	m := boltMeta{pageSize: le.Uint32(rec[8:]), pages: le.Uint64(rec[40:]), txid: le.Uint64(rec[48:])}
	return m, m.pageSize >= 512 && m.pageSize <= 1<<20
}
