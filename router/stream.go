package router

import (
	"bufio"
	"log/slog"
)

// streamResultsAbove is the estimated reply size above which read-batch
// streams its results instead of building the reply whole. A reply built
// whole is held twice (the encoder's buffer, grown by doubling, then
// fasthttp's copy of it): 50 reads of 500 memories with 20 KB of metadata
// each (507 MB, every limit respected) took the server from 99 MB to a
// peak of 2.8 GB resident, so a few such requests at once could exhaust a
// host. Streamed, one result's bytes are held at a time.
const streamResultsAbove = 4 << 20

// itemOverhead is a generous size of one item's JSON besides its content
// and metadata (ids, scores, concepts, timestamps).
const itemOverhead = 512

// resultsSize estimates the bytes of {"results": rs} from its items'
// content and metadata.
func resultsSize(rs []*readResponseJSON) int {
	n := 0
	for _, r := range rs {
		for i := range r.Items {
			it := &r.Items[i]
			n += len(it.Content) + len(it.Metadata) + itemOverhead
			for _, c := range it.Concepts {
				n += len(c) + 3
			}
		}
	}
	return n
}

// streamResults answers 200 with {"results": rs}, written one result at a
// time as the client reads it (chunked transfer encoding): the same bytes
// encodeReply would give for readBatchJSON{rs}. The status is sent before
// the body, so an error while encoding (a bug: every value is encodable)
// can only cut the body short, which the client sees as a broken reply.
func streamResults(c *call, log *slog.Logger, rs []*readResponseJSON) {
	c.ctx.SetContentType("application/json")
	c.ctx.SetStatusCode(200)
	c.ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		if _, err := w.WriteString(`{"results":[`); err != nil {
			return // the client went away
		}
		for i, r := range rs {
			if i > 0 {
				if err := w.WriteByte(','); err != nil {
					return
				}
			}
			var werr error
			if err := encodeReply(r, func(b []byte) { _, werr = w.Write(b) }); err != nil {
				log.Error("cannot encode streamed response", "err", err)
				return
			}
			if werr != nil {
				return
			}
			rs[i] = nil // its memories' bytes may go before the next is written
		}
		_, _ = w.WriteString("]}")
	})
}
