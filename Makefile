# ragd — `make test` runs every check and test; it installs what the tests need by itself (see scripts/test.sh).
# `make build` is the release build (every provider); `make build-offline` the offline-only one, which links no
# hosted model SDK (go build -tags ragd_offline). Both stamp the version and commit (ragd version).
.PHONY: run test build build-offline lint

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
LDFLAGS := -s -w -X github.com/ragd/ragd/internal/buildinfo.version=$(VERSION) -X github.com/ragd/ragd/internal/buildinfo.commit=$(COMMIT)

run:
	go run ./cmd/ragd serve

build:
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o bin/ragd ./cmd/ragd

build-offline:
	CGO_ENABLED=0 go build -tags ragd_offline -trimpath -ldflags "$(LDFLAGS)" -o bin/ragd-offline ./cmd/ragd

test:
	bash scripts/test.sh

lint:
	bash scripts/test.sh lint
