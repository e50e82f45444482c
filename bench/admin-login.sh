#!/usr/bin/env bash
# Peak memory of a real `assistant serve` under N concurrent admin logins
# with unknown emails, each from its own loopback address (127.0.0.2...),
# so the per-address limits do not hide the bound on password hashing.
# Prints the server's RSS before, its peak (VmHWM, from /proc) after each
# round, the status codes, the slowest /healthz during the burst, and the
# owner's login afterwards. Loopback only. Usage:
#   bash bench/admin-login.sh [concurrency] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-128}"
rounds="${2:-2}"
port=18190
tmp=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT

go build -o "$tmp/assistant" ./cmd/assistant
export ASSISTANT_DATA_DIR="$tmp/data" ASSISTANT_LOG_LEVEL=error
printf 'owner password 1\n' | "$tmp/assistant" admin create-user --workspace default --email owner@example.com >/dev/null
ASSISTANT_ADDR="127.0.0.1:$port" "$tmp/assistant" serve >"$tmp/serve.log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -fs "127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.2; done

kib() { awk -v k="$1" '$1 == k":" {print $2}' "/proc/$pid/status"; }
mib() { echo "$(( $1 / 1024 )) MiB"; }
echo "server pid $pid; RSS at rest $(mib "$(kib VmRSS)"), peak so far (startup) $(mib "$(kib VmHWM)")"

for round in $(seq "$rounds"); do
  : >"$tmp/codes"
  start=$(date +%s.%N)
  for i in $(seq "$n"); do
    src="127.0.$(( (i + 1) / 250 )).$(( (i + 1) % 250 + 2 ))"
    curl -s -o /dev/null -w '%{http_code}\n' --max-time 30 --interface "$src" \
      -H 'Content-Type: application/x-www-form-urlencoded' \
      --data "email=nobody$round-$i%40example.com&password=guess$i" \
      "http://127.0.0.1:$port/admin/login" >>"$tmp/codes" &
  done
  worst=0
  for _ in $(seq 20); do
    t=$(curl -s -o /dev/null -w '%{time_total}' --max-time 10 "127.0.0.1:$port/healthz" || echo 10)
    worst=$(awk -v a="$worst" -v b="$t" 'BEGIN {print (b > a) ? b : a}')
    sleep 0.1
  done
  wait $(jobs -p | grep -v "^$pid\$") 2>/dev/null || true
  secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}')
  codes=$(sort "$tmp/codes" | uniq -c | awk '{printf "%s x%s ", $2, $1}')
  echo "round $round: $n logins in ${secs}s: $codes| slowest /healthz ${worst}s | RSS now $(mib "$(kib VmRSS)"), peak $(mib "$(kib VmHWM)")"
done

owner=$(curl -s -o /dev/null -w '%{http_code} in %{time_total}s' --interface 127.0.3.1 \
  -H 'Content-Type: application/x-www-form-urlencoded' \
  --data 'email=owner%40example.com&password=owner+password+1' "http://127.0.0.1:$port/admin/login")
echo "owner login from a fresh address: $owner (303 is success)"
