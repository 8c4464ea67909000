package shard

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A command envelope carries several commands of one group in one Raft log
// entry (group commit). Layout:
//
//	envelopeMarker (0xFF) | envelopeVersion (1) | uvarint count (>= 1) |
//	count × (uvarint length | command bytes)
//
// No StateMachine command type uses the marker byte (raftfsm uses 1-9, the
// meta group's commands in cluster/ stay below 64). A plain entry whose first
// byte is the marker is never written: such a command is wrapped in an
// envelope of one.
const (
	envelopeMarker  byte = 0xFF
	envelopeVersion byte = 1
)

var errBadEnvelope = errors.New("shard: bad command envelope")

// isEnvelope reports whether the log entry data is an envelope.
func isEnvelope(data []byte) bool { return len(data) > 0 && data[0] == envelopeMarker }

// needsEnvelope reports whether cmds must travel as an envelope: more than one
// command, or one that would be mistaken for an envelope.
func needsEnvelope(cmds [][]byte) bool { return len(cmds) > 1 || isEnvelope(cmds[0]) }

// encodeEnvelope packs cmds (at least one) into one envelope.
func encodeEnvelope(cmds [][]byte) []byte {
	size := 2 + binary.MaxVarintLen64
	for _, c := range cmds {
		size += binary.MaxVarintLen64 + len(c)
	}
	b := make([]byte, 0, size)
	b = append(b, envelopeMarker, envelopeVersion)
	b = binary.AppendUvarint(b, uint64(len(cmds)))
	for _, c := range cmds {
		b = binary.AppendUvarint(b, uint64(len(c)))
		b = append(b, c...)
	}
	return b
}

// decodeEnvelope returns the commands of an envelope, in order. They alias b
// (capped, so that appending to one cannot overwrite the next). Any
// malformation is an error: a short or truncated input, another version, a
// count of zero, a length past the end, trailing bytes.
func decodeEnvelope(b []byte) ([][]byte, error) {
	if len(b) < 2 || b[0] != envelopeMarker {
		return nil, fmt.Errorf("%w: missing header", errBadEnvelope)
	}
	if b[1] != envelopeVersion {
		return nil, fmt.Errorf("%w: unknown version %d", errBadEnvelope, b[1])
	}
	rest := b[2:]
	count, n := binary.Uvarint(rest)
	if n <= 0 {
		return nil, fmt.Errorf("%w: bad command count", errBadEnvelope)
	}
	rest = rest[n:]
	// Every command takes at least its one-byte length prefix, which bounds
	// the allocation below by the input size.
	if count == 0 || count > uint64(len(rest)) {
		return nil, fmt.Errorf("%w: command count %d for %d bytes", errBadEnvelope, count, len(rest))
	}
	cmds := make([][]byte, 0, count)
	for i := range count {
		size, n := binary.Uvarint(rest)
		if n <= 0 {
			return nil, fmt.Errorf("%w: bad length of command %d", errBadEnvelope, i)
		}
		rest = rest[n:]
		if size > uint64(len(rest)) {
			return nil, fmt.Errorf("%w: command %d of %d bytes overruns the entry", errBadEnvelope, i, size)
		}
		cmds = append(cmds, rest[:size:size])
		rest = rest[size:]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", errBadEnvelope, len(rest))
	}
	return cmds, nil
}
