// Package mcptools is hebb's tool set for the Model Context Protocol,
// independent of transport: the stdio server of `hebb mcp` and the remote
// connector at POST /mcp register the same tools through Register.
//
// A tool is a thin shell over one REST call (interface §4.9): its arguments
// are the REST request body, forwarded unchanged (domain included, so a room
// address works exactly as on the REST API), and its result is the REST
// response: the JSON as structured content, plus a one-line summary and the
// JSON as text for clients that only read text. A REST error (status ≥ 400)
// becomes a tool error whose structured content is the REST error envelope,
// so it carries the same code, message and details.
//
// Invariants:
//   - No tool deletes anything: deletion is REST-only (interface §4.9).
//   - The local invite tool always mints a single-use code; only the remote
//     set (Options.Remote) accepts max_uses.
//   - With Options.Scopes set, a read tool needs memory:read and a write tool
//     memory:write; the check runs before the REST call.
//   - Input schemas state the interface's bounds (§8); the REST API stays the
//     one place that enforces them, so both surfaces refuse alike.
package mcptools
