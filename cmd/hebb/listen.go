package main

import (
	"fmt"
	"net"
)

// listeners are the sockets `hebb serve` answers on itself. They are all
// bound before the data dir is opened, so a taken port stops the process
// before it bootstraps a cluster or prints a first-start key.
type listeners struct {
	http    net.Listener
	chat    net.Listener // nil without --chat-addr
	metrics net.Listener // nil without --metrics-addr
}

// listen binds --http-addr, --chat-addr and --metrics-addr (the last two
// when set), closing whatever it bound when one of them fails.
func listen(cfg *serveConfig) (*listeners, error) {
	ls := &listeners{}
	for _, l := range []struct {
		flag, addr string
		dst        *net.Listener
	}{
		{"--http-addr", cfg.HTTPAddr, &ls.http},
		{"--chat-addr", cfg.ChatAddr, &ls.chat},
		{"--metrics-addr", cfg.MetricsAddr, &ls.metrics},
	} {
		if l.addr == "" && l.flag != "--http-addr" {
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			ls.close()
			return nil, fmt.Errorf("cannot listen on %s: %w", l.flag, err)
		}
		*l.dst = ln
	}
	return ls, nil
}

// close closes every bound listener (on a failed start).
func (ls *listeners) close() {
	for _, ln := range []net.Listener{ls.http, ls.chat, ls.metrics} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}
