# cairn: build, run, test. See README.md.
GO        ?= go
BIN       := bin/cairn
PKGS      := ./...
VERSION   := $(shell sed -n 's/^\tVersion = "\(.*\)"/\1/p' httprpc/misc.go)
COMMIT    := $(shell git rev-parse --short HEAD 2>/dev/null)
LDFLAGS   := -s -w -X cairn/httprpc.Commit=$(COMMIT)
export CGO_ENABLED ?= 0

CAIRN_PATH ?= $(HOME)/.cairn
# Profiles applied when `make run` initialises a repo (e.g. test).
INIT_PROFILE ?=

.PHONY: build run test test-slow bench fmt lint clean

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/cairn

run: build
	@if [ ! -f "$(CAIRN_PATH)/config" ]; then CAIRN_PATH="$(CAIRN_PATH)" ./$(BIN) init --profile="$(INIT_PROFILE)"; fi
	CAIRN_PATH="$(CAIRN_PATH)" ./$(BIN) daemon

# The unit tests, then the end-to-end suites of tests/ in full (all Kubo
# vectors, real clients); plain `go test ./...` runs a quick subset of those.
test:
	$(GO) vet $(PKGS)
	$(GO) test -count=1 $$($(GO) list ./... | grep -v /tests)
	CAIRN_SLOW=1 $(GO) test -count=1 -timeout 30m ./tests/...

test-slow:
	CAIRN_SLOW=1 $(GO) test -count=1 -timeout 30m -v ./tests/...

bench: build
	$(GO) run ./scripts/bench

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

lint: fmt
	$(GO) vet $(PKGS)

clean:
	rm -rf bin dist
