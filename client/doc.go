// Package client is the Go client library of hebb's REST API (interface.md,
// operator.md): typed requests and responses for every memory, room, vault
// and health endpoint (Client, keyed by X-Api-Key, base URL ending in
// /api/v1) and for the operator API (AdminClient, keyed by X-Admin-Token,
// the server's root URL).
//
// Invariants:
//
//   - The package imports only the standard library, never hebb's internal
//     packages, so it can be vendored or copied on its own.
//   - Every call takes a context; its deadline bounds the whole call,
//     retries and back-off sleeps included.
//   - A request field is sent only when set: strings and slices are omitted
//     when empty, pointer fields when nil, and a [Nullable] field tells an
//     omitted value from an explicit JSON null.
//   - A failed call returns an *[APIError] carrying the server's envelope
//     (code, message, requestId, retryable, details.reason, the raw details
//     and the HTTP status); errors.Is matches it against the sentinels of
//     errors.go by code.
//   - A call is retried only when repeating it cannot apply it twice: a
//     safe call (GETs, reads, idempotent deletes, and a write-batch that
//     carries an Idempotency-Key) after a retryable answer, a transport
//     error or a bare 502/503/504. Writes, feedback and room changes are
//     never repeated after a transport error or the 503 "no leader
//     answered in time" (the server may have applied them), only after a
//     retryable answer that says nothing was applied (NotApplied).
//   - Text that is not valid UTF-8 is refused before anything is sent
//     (ErrNotUTF8); a key with a control character is refused by New.
//     Back-off is exponential with jitter; a Retry-After header is honoured.
//   - A write-batch carries an Idempotency-Key (the caller's, or one
//     generated once per logical call), the same on every retry.
//   - Export streams: one line is decoded at a time and the whole export is
//     never held in memory.
package client
