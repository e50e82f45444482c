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

# The median of three runs of every row (about 4 minutes; docs/performance.md).
# Other options: make bench BENCH_FLAGS="-duration 10s -only stats,chat-openai"
BENCH_FLAGS ?= -repeat 3

bench:
	$(GO) run ./bench/load $(BENCH_FLAGS)
