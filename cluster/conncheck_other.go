//go:build !unix

package cluster

import "net"

// connAlive cannot peek here: rpcConn.alive falls back to a timed read.
func connAlive(net.Conn) (alive, ok bool) { return false, false }
