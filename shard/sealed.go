package shard

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/hashicorp/raft"
)

// A command kept in bbolt (smaller than blobMinBytes) is stored sealed:
//
//	sumMarker (0xFD) | CRC-32C of the data (4 bytes, big-endian) | data
//
// bbolt checks no page, so a flipped or lost byte in a small entry was
// applied as it read; a large command's data has its checksum in its
// segment reference. GetLog checks and strips the seal: an entry that
// fails is an error (raft stops the node rather than apply it). No
// command starts with the marker (raftfsm uses 1-9, the meta group's
// commands stay below 64, envelopes 0xFF, references 0xFE), so entries
// written before sealing read as they are; every command stored since is
// sealed, so one that did start with the marker would still be read back
// whole.
const sumMarker byte = 0xFD

// seals reports whether l is stored sealed: every command not spilled.
func seals(l *raft.Log) bool { return l.Type == raft.LogCommand && len(l.Data) > 0 }

func sealInline(data []byte) []byte {
	b := make([]byte, 5, 5+len(data))
	b[0] = sumMarker
	binary.BigEndian.PutUint32(b[1:], crc32.Checksum(data, crcTable))
	return append(b, data...)
}

// openInline checks a sealed entry and returns its data (aliasing b).
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
