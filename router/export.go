package router

import (
	"bufio"
	"context"

	"github.com/bytedance/sonic"

	"github.com/hebbdb/hebb/raftfsm"
)

const exportPage = 500

// export streams every atom of the caller's account as JSONL, page by page,
// so neither the server nor the client buffers the whole tenant.
func (s *Server) export(c *call) error {
	org := c.org
	// Fail fast, with a proper status, when the group cannot be read at all.
	if _, err := s.backend.ReadFSM(c.std, org); err != nil {
		return err
	}
	c.ctx.SetContentType("application/x-ndjson")
	c.ctx.SetStatusCode(200)
	c.ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		var cursor *raftfsm.Cursor
		for {
			ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
			fsm, err := s.backend.ReadFSM(ctx, org)
			cancel()
			if err != nil {
				s.log.Error("export aborted", "err", err)
				return
			}
			atoms, next := fsm.ExportPage(org, cursor, exportPage)
			for i := range atoms {
				b, err := sonic.Marshal(renderAtom(&atoms[i]))
				if err != nil {
					s.log.Error("export encode", "err", err)
					return
				}
				_, _ = w.Write(b)
				_ = w.WriteByte('\n')
			}
			if err := w.Flush(); err != nil || next == nil || len(atoms) < exportPage {
				return
			}
			cursor = next
		}
	})
	return nil
}
