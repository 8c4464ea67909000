package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

const usage = `hebb: a persistent memory store for AI agents

Usage:
  hebb serve [flags]    run a node (see hebb serve -h)
  hebb admin remove-node <node_id> [--url URL] [--admin-token TOKEN]
                        drain a node's replicas onto the others, then remove it
  hebb admin create-user --email E --password P [flags]
                        make a web console user (hebb admin create-user -h)
  hebb admin set-password --email E --password P [flags]
                        give a console user a new password; their sessions end
  hebb bench <workload> [flags]
                        benchmark a server or the vector kernels (hebb bench -h)
  hebb mcp              stdio tool server (MCP) for MNEMOVERSE_API_KEY / HEBB_API_KEY at HEBB_URL
  hebb version          print the version
` + clientUsage

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "admin":
		err = admin(os.Args[2:])
	case "bench":
		err = benchCmd(os.Args[2:])
	case "mcp":
		err = mcpStdio(os.Args[2:])
	case "write", "read", "recent", "stats", "export", "import", "rooms", "vault":
		err = runClientCommand(os.Args[1], os.Args[2:])
	case "version", "--version", "-v":
		fmt.Println("hebb", version)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "hebb: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if errors.Is(err, flag.ErrHelp) { // -h: the flag set printed the usage
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hebb:", err)
		os.Exit(1)
	}
}
