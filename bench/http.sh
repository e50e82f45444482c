#!/usr/bin/env bash
# Throughput of the public endpoints as a ratio to a bare net/http JSON
# handler measured in the same run (absolute numbers are noisy here).
# Needs wrk (apt-get install wrk). Usage: bash bench/http.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-10}"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT

go build -o "$tmp/assistant" ./cmd/assistant
go build -o "$tmp/baseline" ./bench/baseline
ASSISTANT_ADDR=127.0.0.1:18180 ASSISTANT_DATA_DIR="$tmp/data" ASSISTANT_LOG_LEVEL=error \
  ASSISTANT_PUBLIC_SOFT_LIMIT=0 ASSISTANT_PUBLIC_HARD_LIMIT=0 ASSISTANT_CHAT_RATE_LIMIT=0 \
  "$tmp/assistant" serve >"$tmp/serve.log" 2>&1 &
"$tmp/baseline" -addr 127.0.0.1:18181 &
for _ in $(seq 100); do
  curl -fs 127.0.0.1:18180/healthz >/dev/null 2>&1 && curl -fs 127.0.0.1:18181/ >/dev/null 2>&1 && break
  sleep 0.2
done

rps() { wrk -t2 -c32 -d"${secs}s" "$@" | awk '/Requests\/sec/ {print $2}'; }
CHAT_KEY=$(ASSISTANT_DATA_DIR="$tmp/data" "$tmp/assistant" keys create --workspace bench --name bench | tail -n 1)
export CHAT_KEY
base=$(rps http://127.0.0.1:18181/)
stats=$(rps http://127.0.0.1:18180/api/assistant/v1/knowledge-stats)
resolve=$(rps -s bench/resolve.lua http://127.0.0.1:18180/api/assistant/v1/resolve)
chat=$(rps -s bench/chat.lua http://127.0.0.1:18180/api/v1/chat)
# Latency of one chat at a time: close to the server's own time per turn.
chat_latency=$(wrk -t1 -c1 -d"${secs}s" --latency -s bench/chat.lua http://127.0.0.1:18180/api/v1/chat |
  awk '$1=="50%" {p50=$2} $1=="99%" {p99=$2} END {print p50, p99}')
base2=$(rps http://127.0.0.1:18181/)
awk -v b1="$base" -v b2="$base2" -v s="$stats" -v r="$resolve" -v c="$chat" -v cl="$chat_latency" 'BEGIN {
  b = (b1 + b2) / 2
  printf "bare net/http handler        %10.0f req/s (runs: %.0f, %.0f)\n", b, b1, b2
  printf "knowledge-stats              %10.0f req/s  ratio %.2f\n", s, s / b
  printf "resolve, 20 tokens           %10.0f req/s  ratio %.2f\n", r, r / b
  printf "chat, builtin, operator      %10.0f req/s  ratio %.4f\n", c, c / b
  printf "chat latency, one at a time  p50 p99 = %s\n", cl
}'
