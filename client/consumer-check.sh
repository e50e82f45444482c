#!/usr/bin/env bash
# A fresh consumer module that uses the Go client, as a user's would: its
# go line (1.23, the client's) stays after `go mod tidy`, and its go.mod
# requires the client alone, none of the server's dependencies. The client
# is taken from this checkout through a replace directive (a published
# client is fetched by its tag, client/vX.Y.Z). Run by .ci/run.
set -euo pipefail
client=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > go.mod <<MOD
module example.com/consumer

go 1.23

require github.com/constraintlab/assistant/client v0.0.0

replace github.com/constraintlab/assistant/client => $client
MOD
cat > main.go <<'GO'
package main

import (
	"fmt"

	"github.com/constraintlab/assistant/client"
)

func main() {
	c := client.New("http://localhost:8080", client.WithAPIKey("sk_service_example"))
	p := client.DefaultRetryPolicy()
	fmt.Println(c != nil, p.MaxAttempts, len(client.FindTokens("[framework:theory-of-constraints]")))
}
GO
GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod tidy
go_line=$(sed -n 's/^go //p' go.mod)
requires=$(go list -m all | tail -n +2)
echo "consumer go line: $go_line; modules: $requires"
[ "$go_line" = "1.23" ] || { echo "go mod tidy moved the consumer's go line to $go_line" >&2; exit 1; }
[ "$(echo "$requires" | awk '{print $1}')" = "github.com/constraintlab/assistant/client" ] || { echo "the consumer needs more than the client: $requires" >&2; exit 1; }
[ "$(go run .)" = "true 3 1" ] || { echo "the consumer did not run" >&2; exit 1; }
echo "client consumer: ok"
