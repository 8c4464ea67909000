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
	bp := replyBuffers.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledReply {
			replyBuffers.Put(bp)
		}
	}()
	*bp = (*bp)[:0]
	if err := encoder.EncodeInto(bp, v, replyOptions); err != nil {
		return err
	}
	use(*bp)
	return nil
}
