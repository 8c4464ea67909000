//go:build unix

package cluster

import (
	"errors"
	"net"
	"syscall"
)

// connAlive peeks at conn's socket without blocking: true when there is
// nothing to read and the other side has not closed it; false too when the
// descriptor cannot be reached.
func connAlive(conn net.Conn) bool {
	sc, isSys := conn.(syscall.Conn)
	if !isSys {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	err = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, e := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = errors.Is(e, syscall.EAGAIN) || errors.Is(e, syscall.EWOULDBLOCK)
		return true // never wait for the socket to become readable
	})
	return alive && err == nil
}
