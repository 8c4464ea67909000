package router

import (
	"sync"

	"github.com/bytedance/sonic/encoder"
)

// replyOptions are sonic.ConfigDefault's encoder options plus
// ValidateString: a string that is not UTF-8 (content stored before bodies
// were checked, decode.go) goes out with U+FFFD in place of its bad bytes,
// so a reply is always valid JSON; and SortMapKeys: an object built from a
// map (metadata, small replies) has the same key order in every reply, as
// encoding/json gives it, instead of the map's random order. Otherwise a
// reply encodes exactly as sonic.Marshal would.
const replyOptions = encoder.ValidateString | encoder.SortMapKeys

// maxPooledReply bounds the buffers kept for reuse: a rare large reply should
// not pin its memory in the pool.
const maxPooledReply = 1 << 20

// replyBuffers hold replies while they are encoded: fasthttp copies a body
// into its own pooled buffer, so the slice can be reused at once and a reply
// allocates nothing for its bytes.
var replyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// encodeReply encodes v into a pooled buffer and hands the bytes to use,
// which must not keep them.
func encodeReply(v any, use func([]byte)) error {
	return encodeReplyOwned(v, use, nil)
}

// encodeReplyOwned is encodeReply, but a buffer grown past what the pool
// keeps is handed to keep instead (when not nil), which may hold on to it:
// a large reply is then held once, not once in the buffer and again in
// fasthttp's copy (16 concurrent reads of 10 MB replies peaked at 507 MB
// resident with the copy).
func encodeReplyOwned(v any, use, keep func([]byte)) error {
	bp := replyBuffers.Get().(*[]byte)
	*bp = (*bp)[:0]
	if err := encoder.EncodeInto(bp, v, replyOptions); err != nil {
		replyBuffers.Put(bp)
		return err
	}
	if cap(*bp) > maxPooledReply {
		if keep != nil {
			keep(*bp)
		} else {
			use(*bp)
		}
		return nil // not pooled: a rare large reply should not pin its memory
	}
	use(*bp)
	replyBuffers.Put(bp)
	return nil
}
