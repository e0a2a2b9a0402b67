# ragd — `make test` runs every check and test; it installs what the tests need by itself (see scripts/test.sh).
.PHONY: run test build lint

run:
	go run ./cmd/ragd serve

build:
	go build -o bin/ragd ./cmd/ragd

test:
	bash scripts/test.sh

lint:
	bash scripts/test.sh lint
