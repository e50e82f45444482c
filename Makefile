# The two commands of the README: `make run` and `make test`.
GO ?= go

.PHONY: run test build race vet lint bench

run:
	$(GO) run ./cmd/assistant serve

test:
	$(GO) test ./...

build:
	$(GO) build -o bin/assistant ./cmd/assistant

race:
	$(GO) test -race ./...

vet:
	$(GO) vet ./...

lint: vet
	staticcheck ./...
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)
	$(GO) mod tidy -diff

bench:
	bash bench/http.sh
