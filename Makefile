# The two commands of the README: `make run` and `make test`. The Go client
# (client/) is a module of its own: test, race, vet and lint cover both.
GO ?= go

.PHONY: run test build race vet lint bench bench-scaleout soak

run:
	$(GO) run ./cmd/assistant serve

test:
	$(GO) test -timeout 20m ./...
	cd client && $(GO) test ./...

build:
	$(GO) build -o bin/assistant ./cmd/assistant

race:
	$(GO) test -race ./...
	cd client && $(GO) test -race ./...

vet:
	$(GO) vet ./...
	cd client && $(GO) vet ./...

lint: vet
	staticcheck ./...
	cd client && staticcheck ./...
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)
	$(GO) mod tidy -diff
	cd client && $(GO) mod tidy -diff

# The median of three runs of every row (about 4 minutes; docs/performance.md).
# Other options: make bench BENCH_FLAGS="-duration 10s -only stats,chat-openai"
BENCH_FLAGS ?= -repeat 3

bench:
	$(GO) run ./bench/load $(BENCH_FLAGS)

# Scale-out figures (docs/performance.md, "Scale-out (PostgreSQL + Redis)"):
# one instance on SQLite, one and three on PostgreSQL + Redis, in one run.
# Needs ASSISTANT_TEST_POSTGRES_URL (or -postgres URL in BENCH_SCALEOUT_FLAGS)
# and redis-server; fails without them.
BENCH_SCALEOUT_FLAGS ?= -repeat 3

bench-scaleout:
	$(GO) run ./bench/load -scaleout $(BENCH_SCALEOUT_FLAGS)

# The soak (docs/performance.md, "Memory under varied load"): one builtin
# service under varied requests for 10 minutes, reporting its memory.
# With a limit: make soak SOAK_FLAGS="-duration 10m -soak-memlimit 256MiB"
SOAK_FLAGS ?= -duration 10m

soak:
	$(GO) run ./bench/load -soak $(SOAK_FLAGS)
