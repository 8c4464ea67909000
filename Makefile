# hebb: a persistent memory store for AI agents.
GO        ?= go
BIN       := bin/hebb
PKGS      := ./...
GOFLAGS   ?=

.PHONY: build run test test-race lint fuzz e2e soak bench clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/hebb

run: build
	./$(BIN) serve

# The whole suite, race detector on (CI runs exactly this).
test:
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

test-race: test

lint:
	gofmt -l . | tee /dev/stderr | (! read)
	$(GO) vet $(PKGS)

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecodeState -fuzztime 30s ./raftfsm
	$(GO) test -run '^$$' -fuzz FuzzEmbed -fuzztime 30s ./router/embedder
	$(GO) test -run '^$$' -fuzz FuzzTopK -fuzztime 30s ./vecmath

e2e: build
	$(GO) test -race -count=1 -run E2E ./cmd/hebb

# Starts a local server on free ports, loads 10k atoms, searches open loop at
# 5/s for 20 s, compares the vector kernels; report and plot in bench/out/.
bench: build
	./$(BIN) bench default

clean:
	rm -rf bin
