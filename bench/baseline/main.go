// Command baseline is the yardstick of bench/http.sh: a bare net/http
// server answering every request with a small fixed JSON object, so the
// service's throughput can be reported as a ratio measured in the same run.
package main

import (
	"flag"
	"log"
	"net/http"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18181", "address to listen on")
	flag.Parse()
	body := []byte(`{"total":184,"frameworks":86,"papers":48,"blogs":50}` + "\n")
	log.Fatal(http.ListenAndServe(*addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})))
}
