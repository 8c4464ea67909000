// Package leakcheck helps the HTTP servers' tests check that malformed
// requests, whose raw bytes the HTTP layer may quote in its error lines,
// leave no credential or body in the log: it builds such requests around a
// secret, sends them over a raw connection and collects a logger's output.
package leakcheck
