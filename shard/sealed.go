package shard

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/hashicorp/raft"
)

// Every entry with data is stored sealed (since 2026-12-08):
//
//	entryMarker (0xFC) | CRC-32C of type, index, term and payload (4 bytes,
//	big-endian) | payload
//
// where the payload is the data, or the reference to it in a segment for a
// large command. bbolt checks no page, so a flipped or lost byte was applied
// as it read; and the first seal (sumMarker, below) covered only a small
// command's data, so a bit flipped in an entry's type turned a command into
// a no-op, and an acknowledged write vanished without a word. GetLog checks
// and strips the seal: an entry that fails is an error (raft stops the node
// rather than apply it). No command starts with either marker (raftfsm
// uses 1-9, the meta group's commands stay below 64, envelopes 0xFF,
// references 0xFE) and a configuration is msgpack (a map, 0x8_ or 0xDE), so
// entries written before read as they are.
const entryMarker byte = 0xFC

// sumMarker starts a small command sealed by an earlier binary:
//
//	sumMarker (0xFD) | CRC-32C of the data (4 bytes, big-endian) | data
const sumMarker byte = 0xFD

// sealEntry seals payload, the stored form of l's data.
func sealEntry(l *raft.Log, payload []byte) []byte {
	b := make([]byte, 5, 5+len(payload))
	b[0] = entryMarker
	binary.BigEndian.PutUint32(b[1:], entrySum(l, payload))
	return append(b, payload...)
}

// entrySum is the checksum of l's type, index and term and payload.
func entrySum(l *raft.Log, payload []byte) uint32 {
	var head [17]byte
	head[0] = byte(l.Type)
	binary.BigEndian.PutUint64(head[1:], l.Index)
	binary.BigEndian.PutUint64(head[9:], l.Term)
	return crc32.Update(crc32.Checksum(head[:], crcTable), crcTable, payload)
}

// openEntry checks the entry l as stored (its data sealed) and returns its
// payload (aliasing l.Data).
func openEntry(l *raft.Log) ([]byte, error) {
	if len(l.Data) < 5 {
		return nil, fmt.Errorf("%w: sealed entry of %d bytes", errBadBlob, len(l.Data))
	}
	payload := l.Data[5:]
	if entrySum(l, payload) != binary.BigEndian.Uint32(l.Data[1:]) {
		return nil, fmt.Errorf("%w: checksum mismatch in an entry of %d bytes (type %d, term %d)",
			errBadBlob, len(payload), l.Type, l.Term)
	}
	return payload, nil
}

// openInline checks a small command sealed by an earlier binary
// (sumMarker) and returns its data (aliasing b).
func openInline(b []byte) ([]byte, error) {
	if len(b) < 5 {
		return nil, fmt.Errorf("%w: sealed entry of %d bytes", errBadBlob, len(b))
	}
	data := b[5:]
	if crc32.Checksum(data, crcTable) != binary.BigEndian.Uint32(b[1:]) {
		return nil, fmt.Errorf("%w: checksum mismatch in an entry of %d bytes", errBadBlob, len(data))
	}
	return data, nil
}
