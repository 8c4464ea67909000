//go:build !unix

package router

// readable is true where a socket cannot be peeked without blocking: the
// connection does not poll, it parks at once.
func readable(uintptr) bool { return true }
