// Command hebb is the one binary: `hebb serve` runs a node (embedded single
// node by default), other subcommands are clients of a running server.
// This package parses flags into a Config, wires the packages and runs;
// it holds no logic of its own.
package main
