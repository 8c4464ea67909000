//go:build unix

package router

import (
	"errors"
	"syscall"
)

// readable reports whether the socket fd has data or an error to read,
// without reading or blocking.
func readable(fd uintptr) bool {
	var b [1]byte
	n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return n > 0 || !errors.Is(err, syscall.EAGAIN)
}
