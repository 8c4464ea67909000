//go:build !unix

package cluster

import "net"

// connAlive cannot peek here: idle connections are not reused (rpcConn.alive).
func connAlive(net.Conn) bool { return false }
