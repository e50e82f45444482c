package client

import (
	"net/http"
	"sync"
)

// countingClient counts the requests it sends.
func countingClient(n *int) *http.Client {
	var mu sync.Mutex
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		*n++
		mu.Unlock()
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
