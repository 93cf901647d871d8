# cairn: build, run, test. See README.md.
GO        ?= go
BIN       := bin/cairn
PKGS      := ./...
VERSION   := $(shell sed -n 's/^\tVersion = "\(.*\)"/\1/p' node/version.go)
COMMIT    := $(shell git rev-parse --short HEAD 2>/dev/null)
LDFLAGS   := -s -w -X cairn/node.Commit=$(COMMIT)
export CGO_ENABLED ?= 0

CAIRN_PATH ?= $(HOME)/.cairn
# Profiles applied when `make run` initialises a repo (e.g. test).
INIT_PROFILE ?=

.PHONY: build run test test-race test-slow fuzz conformance gateway-conformance prosody-modules interop faults test-fleet bench bench-slowloris bench-names bench-p2p bench-pubsub soak attack fmt lint clean \
	cross smoke-arm deb deps deps-check systemd-verify install-test bench-board bench-scale bench-provide vm-bench board-check

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/cairn

run: build
	@if [ ! -f "$(CAIRN_PATH)/config" ]; then CAIRN_PATH="$(CAIRN_PATH)" ./$(BIN) init --profile="$(INIT_PROFILE)"; fi
	CAIRN_PATH="$(CAIRN_PATH)" ./$(BIN) daemon

# The unit tests, then the end-to-end suites of tests/ in full (all Kubo
# vectors, real clients; plain `go test ./...` runs a quick subset of
# those), then the board checks (cross builds and size budget, arm64/armv7
# under qemu-user, systemd-analyze, install.sh and .deb in overlays; these
# install qemu-user-static, systemd and dpkg-dev with apt-get when missing
# and need root for the install test).
test:
	$(MAKE) lint
	$(GO) test -count=1 $$($(GO) list ./... | grep -v /tests)
	$(MAKE) test-race
	CAIRN_SLOW=1 $(GO) test -count=1 -timeout 30m ./tests/...
	$(MAKE) board-check

# The core packages' unit tests under the race detector (config swaps,
# write sessions, GC, the server and the module host run concurrently).
# The race detector needs cgo (gcc), which the builds above turn off.
RACE_PKGS := ./storage ./node/... ./rpc/... ./commands/... ./modules/...
test-race:
	CGO_ENABLED=1 $(GO) test -race -count=1 $(RACE_PKGS)

test-slow:
	CAIRN_SLOW=1 $(GO) test -count=1 -timeout 30m -v ./tests/...

# Each fuzz target for FUZZTIME, from its seeds (in the test code, and
# testdata/fuzz/ where found inputs are kept): the inputs that come from
# outside (CAR, tar, dag-json/dag-cbor, config documents, multipart add with
# storage and only-hash, RPC options, IPNS records) and Lua snippets. Plain `go test`
# runs the seeds only.
FUZZTIME ?= 15s
FUZZ_TARGETS := ./commands:FuzzCARImport ./commands:FuzzTarAdd ./commands:FuzzDagPut \
	./commands:FuzzConfigReplace ./commands:FuzzMultipartAddStored ./commands:FuzzMultipartAdd \
	./commands:FuzzDecodeArgs ./node:FuzzIPNSRecord ./modules/lua:FuzzLua_Snippet
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) $${t%%:*}; \
	done

# The clients' own suites against cairn daemons on loopback: go-ipfs-api
# 0.7.0's tests and kubo-rpc-client 7.1.0 driven by interface-ipfs-core
# through ipfsd-ctl (docs/conformance.md). A failure not listed in
# tests/conformance/skip.txt fails. Needs node and npm; installs are cached
# in ~/.cache/cairn-conformance.
conformance: build
	$(GO) run ./scripts/conformance -bin $(BIN)

# Every module of Debian's prosody-modules package that provides an HTTP
# app, loaded unchanged by the module host and sent a GET; each outcome
# must be the one docs/modules.md records (modules/lua,
# TestLua_ProsodyModules_Census). The package is downloaded once with
# apt-get (Debian or Ubuntu) and unpacked with dpkg -x, never installed.
PROSODY_MODULES_DEB   ?= 0.0~hg20230223.556bf57d6417+dfsg-1
PROSODY_MODULES_CACHE ?= $(HOME)/.cache/cairn-prosody-modules
prosody-modules:
	@set -e; d="$(PROSODY_MODULES_CACHE)"; mkdir -p "$$d"; \
	if [ ! -d "$$d/x/usr/lib/prosody/modules" ]; then \
		(cd "$$d" && apt-get download "prosody-modules=$(PROSODY_MODULES_DEB)" && dpkg -x prosody-modules_*_all.deb x); \
	fi; \
	CAIRN_PROSODY_MODULES="$$d/x/usr/lib/prosody/modules" $(GO) test -count=1 -v -run '^TestLua_ProsodyModules_Census$$' ./modules/lua

# The official gateway suite, gateway-conformance v0.13.1 (installed once
# into ~/.cache/cairn-gwconformance by scripts/gateway-conformance-install.sh;
# GATEWAY_CONFORMANCE_SRC where the module proxy refuses it), against Kubo
# v0.43.1 and cairn, each offline with the suite's fixtures, in a network
# namespace of its own. Fails when a case passes on Kubo and fails on cairn
# unless tests/gateway-conformance/differences.txt lists it (docs/gateway.md).
gateway-conformance: build
	GO=$(GO) KUBO_ARM64=0 scripts/bench-kubo.sh
	GO=$(GO) scripts/gateway-conformance-install.sh
	$(GO) build -o bin/gwconformance ./scripts/gwconformance
	bin/gwconformance -bin $(BIN) $(GWC_ARGS)

# cairn and a real Kubo v0.43.1 (scripts/bench-kubo.sh, cached) online on
# loopback in a network namespace of their own: same CIDs and CARs, bitswap
# both ways, names and pubsub (tests/interop, build tag interop).
interop: build
	GO=$(GO) scripts/bench-kubo.sh
	$(GO) test -c -tags interop -o bin/interop.test ./tests/interop
	cd tests/interop && ../../bin/interop.test -test.count=1 -test.v -test.timeout 20m $(INTEROP_ARGS)

# The storage faults (tests/faults, build tag faults): disk full during an
# add, a commit and a GC, a file system turning read-only, a flipped bit in
# a stored block, on small ext4 file systems on loop devices that each test
# makes and removes; I/O errors on read through a FUSE shim. Needs root,
# losetup, mkfs.ext4 and /dev/fuse (docs/security.md, "Disk").
faults:
	$(GO) test -c -tags faults -o bin/faults.test ./tests/faults
	cd tests/faults && ../../bin/faults.test -test.count=1 -test.v -test.timeout 10m $(FAULTS_ARGS)

# Side by side with Kubo v0.43.1 (installed once under ~/.cache/cairn-bench
# by scripts/bench-kubo.sh); both offline on loopback in a network
# namespace of their own (root). Medians of 3 runs; see scripts/bench.
bench: build
	@command -v wrk >/dev/null || { echo "installing wrk (Debian) for the POST version figure"; apt-get update -qq && apt-get install -y -qq wrk; }
	CGO_ENABLED=0 GOARCH=arm64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/cairn-linux-arm64 ./cmd/cairn
	GO=$(GO) scripts/bench-kubo.sh
	$(GO) build -o bin/bench ./scripts/bench
	bin/bench $(BENCH_ARGS)

# Latency of a legitimate RPC call with 500 slowloris connections open
# from 10 LAN-like addresses, against the unloaded daemon (goal: within 2x;
# network namespace of its own, root). See scripts/slowloris.
bench-slowloris: build
	$(GO) build -o bin/slowloris ./scripts/slowloris
	bin/slowloris -bin $(BIN) $(BENCH_ARGS)

# 30 minutes of mixed load on the pi-zero-2w budget in a memory cgroup of
# that size, online on loopback in a network namespace of its own with a
# peer fetching over bitswap, asking the LAN DHT and publishing on pubsub,
# SIGKILL every 5 minutes, no growth of goroutines, descriptors or RssAnon
# within each life, then repo verify and every acknowledged add read back
# (root; not CI). See scripts/soak.
soak: build
	$(GO) build -o bin/soak ./scripts/soak
	bin/soak -bin $(BIN) $(SOAK_ARGS)

# Hostile peers against the pi-zero-2w budget in a memory cgroup of that
# size, online on loopback in a network namespace of its own (root):
# connection, stream and half-open handshake floods, bitswap, DHT, pubsub,
# identify/ping/AutoNAT spam, 8 s each, RPC latency and RssAnon during
# each, the node's figures after each and after the battery and 150 s
# at rest (about 6 minutes; docs/security.md,
# "Peers"). See scripts/attack.
attack: build
	$(GO) build -o bin/attack ./scripts/attack
	bin/attack -bin $(BIN) $(ATTACK_ARGS)

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

lint: fmt
	$(GO) vet $(PKGS)
	GOOS=darwin GOARCH=arm64 $(GO) vet $(PKGS)
	$(GO) vet -tags interop ./tests/interop
	$(GO) vet -tags fleet ./tests/fleet
	$(GO) vet -tags faults ./tests/faults
	scripts/tracked-files-check.sh

clean:
	rm -rf bin dist

# --- boards (see docs/board.md) ---

# Static release binaries (arm64, armv7, armv6, amd64) with SHA256SUMS and
# the size budget check.
cross:
	COMMIT=$(COMMIT) GO=$(GO) scripts/cross.sh

# arm64 and armv7 binaries under qemu-user: init, daemon, add, cat, shutdown.
smoke-arm:
	COMMIT=$(COMMIT) GO=$(GO) scripts/cross.sh arm64 armv7
	scripts/smoke-arm.sh arm64 armv7

# Debian packages for arm64 and armhf.
deb:
	COMMIT=$(COMMIT) GO=$(GO) scripts/cross.sh arm64 armv6
	COMMIT=$(COMMIT) scripts/deb.sh arm64 armhf

# scripts/deps.txt: the packages linked into cmd/cairn.
deps:
	GO=$(GO) scripts/deps.sh

deps-check:
	GO=$(GO) scripts/deps.sh check

systemd-verify:
	COMMIT=$(COMMIT) GO=$(GO) scripts/cross.sh amd64
	scripts/systemd-verify.sh dist/cairn-linux-amd64

# install.sh and the .deb for real, inside overlays (root).
install-test:
	COMMIT=$(COMMIT) GO=$(GO) scripts/cross.sh amd64
	COMMIT=$(COMMIT) scripts/deb.sh amd64
	scripts/install-test.sh dist/cairn-linux-amd64 dist/cairn_$(VERSION)+g$(COMMIT)_amd64.deb

# cairn (pi-zero-2w) and Kubo (lowpower) each in a memory cgroup of the
# profile's budget (cgroup v2 or v1; root): add and cat 1 GiB, medians of 3.
# Keys and IPNS names on the pi-zero-2w budget, in a memory cgroup of it
# (root): 1,000 keys generated, published, resolved twice; RssAnon sampled.
# p2p forwarding between two daemons against direct loopback TCP
# (scripts/netbench -p2p; docs/p2p.md).
bench-p2p: build
	$(GO) build -o bin/netbench ./scripts/netbench
	bin/netbench -p2p -bin $(BIN) $(BENCH_ARGS)

bench-names: build
	$(GO) build -o bin/namesbench ./scripts/namesbench
	bin/namesbench -bin $(BIN) $(BENCH_ARGS)

# A stalled pubsub subscriber: A publishes 10,000 messages of 1 KiB to B,
# whose second RPC subscriber stops reading; RssAnon of both sampled,
# against two Kubo 0.43.1 daemons in the same run (loopback, network
# namespace of its own; medians of 3). See scripts/pubsubbench.
bench-pubsub: build
	GO=$(GO) scripts/bench-kubo.sh
	$(GO) build -o bin/pubsubbench ./scripts/pubsubbench
	bin/pubsubbench -bin $(BIN) $(BENCH_ARGS)

bench-board: build
	GO=$(GO) scripts/bench-kubo.sh
	$(GO) build -o bin/benchboard ./scripts/benchboard
	bin/benchboard -bin $(BIN) $(BENCH_ARGS)

# cairn beside Kubo v0.43.1 (scripts/bench-kubo.sh with KUBO_VERSION,
# host binary only) as their repos grow to each of -stages block counts
# (1 KiB raw leaves; default 131072,1048576): add rate and peak RssAnon,
# then after a SIGTERM restart, idle RssAnon, cat, repo/stat and one-block
# add latency; after the last stage a GC beside one-block adds and the
# bytes on disk per byte held. Offline on loopback in a network namespace
# of its own (root); -board pi-zero-2w puts each daemon in a memory cgroup
# of that budget. See scripts/benchscale.
bench-scale: build
	GO=$(GO) KUBO_ARM64=0 scripts/bench-kubo.sh
	$(GO) build -o bin/benchscale ./scripts/benchscale
	bin/benchscale -bin $(BIN) $(BENCH_ARGS)

# The same in a 512 MiB VM with the budget as a cgroup (KVM or TCG; not CI).
vm-bench:
	COMMIT=$(COMMIT) GO=$(GO) scripts/cross.sh amd64
	scripts/vm-bench.sh pi-zero-2w 1024 10000

# A reprovide of every stored block (Provide.Strategy "all") against a
# loopback DHT of -peers in-process peers (default 4), after storing
# -blocks 1 KiB blocks (default 1048576): its duration, the daemon's peak
# RssAnon during it, the records each peer received. Not CI.
bench-provide: build
	$(GO) build -o bin/providescale ./scripts/providescale
	bin/providescale -bin $(BIN) $(BENCH_ARGS)

# What CI runs for the boards.
board-check: deps-check cross smoke-arm systemd-verify install-test

# Three cairn daemons driven by a real IPFS Cluster v1.1.6 (crdt, three
# peers, ipfs-cluster-ctl, the cluster's Pinning Service API for cairn's
# pin/remote), all on loopback in a network namespace of the test binary's
# own; the cluster is built once from the module proxy into
# ~/.cache/cairn-fleet (scripts/cluster-install.sh). See docs/fleet.md.
test-fleet: build
	GO=$(GO) scripts/cluster-install.sh
	$(GO) test -c -tags fleet -o bin/fleet.test ./tests/fleet
	cd tests/fleet && ../../bin/fleet.test -test.count=1 -test.v -test.timeout 15m $(FLEET_ARGS)
