package router

import (
	"bufio"
	"context"
	"fmt"

	"github.com/bytedance/sonic"
	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/raftfsm"
	"github.com/hebbdb/hebb/router/relay"
)

const exportPage = 500

// A node without a replica of the caller's group exports page by page
// through a node that has one: each forwarded request carries
// exportPageHeader (exportStart, or the cursor of the page before) and its
// answer the next page's cursor in exportNextHeader (none after the last).
// Forwarding the whole export instead made the node holding the replica
// render the tenant into one answer held in memory, sent in one node call
// bounded by the request timeout. Between nodes only.
const (
	exportPageHeader = "X-Hebb-Export-Page"
	exportNextHeader = "X-Hebb-Export-Next"
	exportStart      = "start"
)

// export streams every atom of the caller's account as JSONL, page by page,
// so neither the server nor the client buffers the whole tenant.
func (s *Server) export(c *call) error {
	org := c.org
	if page := string(c.ctx.Request.Header.Peek(exportPageHeader)); page != "" && relay.Relayed(c.ctx) {
		return s.exportOnePage(c, org, page)
	}
	// Fail fast, with a proper status, when the group cannot be read at all.
	if _, err := s.backend.ReadFSM(c.std, org); err != nil {
		if _, ok := notHosted(err); ok && !relay.Relayed(c.ctx) {
			if fw, ok := s.backend.(Forwarder); ok {
				return s.exportThrough(c, fw, org)
			}
		}
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
				abortExport(w)
				return
			}
			atoms, next := fsm.ExportPage(org, cursor, exportPage)
			if err := writeAtoms(w, atoms); err != nil {
				s.log.Error("export encode", "err", err)
				abortExport(w)
				return
			}
			if err := w.Flush(); err != nil || next == nil || len(atoms) < exportPage {
				return
			}
			cursor = next
		}
	})
	return nil
}

// exportAborted ends an export that could not go on, once its answer (200)
// had started: a last line without its newline. A stream that ends on a
// line boundary reads as complete, and a backup missing its last pages
// looked whole; this line is no atom (an import counts it failed) and the
// Go client reports the stream cut.
const exportAborted = `{"error":"export aborted before its end: run it again"}`

func abortExport(w *bufio.Writer) {
	_, _ = w.WriteString(exportAborted)
	_ = w.Flush()
}

// writeAtoms writes atoms as JSONL.
func writeAtoms(w *bufio.Writer, atoms []raftfsm.Atom) error {
	for i := range atoms {
		b, err := sonic.Marshal(renderAtom(&atoms[i]))
		if err != nil {
			return err
		}
		_, _ = w.Write(b)
		_ = w.WriteByte('\n')
	}
	return nil
}

// exportOnePage answers a forwarded page request: the page after page's
// cursor, and the next page's cursor when there may be more.
func (s *Server) exportOnePage(c *call, org, page string) error {
	var cursor *raftfsm.Cursor
	if page != exportStart {
		cur, ok := decodeCursor(page)
		if !ok {
			return validationError(fieldErr("value_error", "Invalid export page cursor", "header", exportPageHeader))
		}
		cursor = cur
	}
	fsm, err := s.backend.ReadFSM(c.std, org)
	if err != nil {
		return err
	}
	atoms, next := fsm.ExportPage(org, cursor, exportPage)
	w := bufio.NewWriter(c.ctx)
	if err := writeAtoms(w, atoms); err != nil {
		return fmt.Errorf("cannot encode export page: %w", err)
	}
	_ = w.Flush()
	if next != nil && len(atoms) == exportPage {
		c.ctx.Response.Header.Set(exportNextHeader, encodeCursor(next))
	}
	c.ctx.SetContentType("application/x-ndjson")
	return nil
}

// exportThrough streams the export of org's atoms from a node that holds
// its group, a page per node call. The first page is fetched before the
// answer starts, so a failure then gets its own status.
func (s *Server) exportThrough(c *call, fw Forwarder, org string) error {
	req := fasthttp.AcquireRequest()
	c.ctx.Request.CopyTo(req) // the call's request is recycled once the handler returns
	inOrg, inProcess := inProcessOrg(c.ctx)
	fetch := func(page string, resp *fasthttp.Response) error {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		return relay.Exchange(req, resp, func(r *fasthttp.Request) {
			markOrg(r, inOrg, inProcess)
			r.Header.Set(exportPageHeader, page)
		}, func(raw []byte) ([]byte, error) { return fw.ForwardHTTP(ctx, org, raw) })
	}
	resp := fasthttp.AcquireResponse()
	if err := fetch(exportStart, resp); err != nil || resp.StatusCode() != 200 {
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		if err != nil {
			return err
		}
		resp.CopyTo(&c.ctx.Response) // the other node's error, as it answered it
		return nil
	}
	c.ctx.SetContentType("application/x-ndjson")
	c.ctx.SetStatusCode(200)
	c.ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		for {
			_, _ = w.Write(resp.Body())
			next := string(resp.Header.Peek(exportNextHeader))
			if err := w.Flush(); err != nil || next == "" {
				return
			}
			resp.Reset()
			if err := fetch(next, resp); err != nil || resp.StatusCode() != 200 {
				s.log.Error("export aborted", "err", err, "status", resp.StatusCode())
				abortExport(w)
				return
			}
		}
	})
	return nil
}
