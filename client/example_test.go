package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/constraintlab/assistant/client"
)

// fakeService stands in for the assistant service so the examples are
// deterministic; point client.New at your own instance instead.
func fakeService() *httptest.Server {
	answer := `{"response":"Find the constraint first [framework:theory-of-constraints].",` +
		`"reasoning_trace":[{"hop":0,"tool":"search_knowledge","input_summary":"query=\"late orders\"","result_summary":"1 result"}],` +
		`"rag_hits":[{"title":"Theory of Constraints","source":"framework:theory-of-constraints","url":null,"score":1,"snippet":"..."}],` +
		`"confidence":{"score":1,"level":"high","totalClaims":1,"verifiedClaims":1,"verdicts":[{"claim":"Find the constraint first.",` +
		`"status":"verified","citations":["framework:theory-of-constraints"],"evidence":{"type":"framework","slug":"theory-of-constraints",` +
		`"snippet":"Identify the constraint."},"score":0.92,"reason":"the cited knowledge states it"}]}}`
	chatCalls := 0
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/chat":
			if r.Header.Get("Authorization") != "Bearer sk_service_example" {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, `{"type":"urn:assistant:problem:unauthorized","title":"Unauthorized","status":401,"detail":"The API key is not valid.","request_id":"r-401"}`)
				return
			}
			if chatCalls++; chatCalls == 1 { // the first call is rate limited
				w.Header().Set("Retry-After", "1")
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, `{"type":"urn:assistant:problem:rate-limited","title":"Too Many Requests","status":429,"detail":"Retry after 1 seconds.","request_id":"r-429","retry_after_seconds":1}`)
				return
			}
			if r.Header.Get("Accept") == "text/event-stream" {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "event: hop\ndata: %s\n\n", `{"hop":0,"tool":"search_knowledge","input_summary":"query=\"late orders\"","result_summary":"1 result"}`)
				fmt.Fprintf(w, "event: delta\ndata: %s\n\n", `{"text":"Find the constraint "}`)
				fmt.Fprintf(w, "event: delta\ndata: %s\n\n", `{"text":"first [framework:theory-of-constraints]."}`)
				fmt.Fprintf(w, "event: final\ndata: %s\n\n", answer)
				return
			}
			io.WriteString(w, answer)
		case "/api/assistant/v1/resolve":
			var body struct{ Tokens []client.Token }
			json.NewDecoder(r.Body).Decode(&body)
			out := client.ResolveResponse{Resolved: []client.EntityCard{}, Unresolved: []client.UnresolvedToken{}}
			for _, t := range body.Tokens {
				if t.Slug == "nope" {
					out.Unresolved = append(out.Unresolved, client.UnresolvedToken{Type: t.Type, Slug: t.Slug, Reason: client.ReasonNotFound})
					continue
				}
				out.Resolved = append(out.Resolved, client.EntityCard{Type: t.Type, Slug: t.Slug, Token: t.String(), Title: strings.ToUpper(t.Slug)})
			}
			json.NewEncoder(w).Encode(out)
		default:
			http.NotFound(w, r)
		}
	}))
}

// noSleep makes the examples instant; a real client sleeps.
func noSleep(ctx context.Context, d time.Duration) error {
	fmt.Println("waiting", d)
	return nil
}

func Example() {
	srv := fakeService()
	defer srv.Close()

	c := client.New(srv.URL, client.WithAPIKey("sk_service_example"), client.WithSleep(noSleep))
	resp, err := c.Chat(context.Background(), client.ChatRequest{
		Message:  "Our packing station cannot keep up and orders ship late",
		Mode:     client.ModeOperator,
		Vertical: "ecommerce",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Response)
	fmt.Println("confidence:", resp.Confidence.Level, resp.Confidence.VerifiedClaims, "of", resp.Confidence.TotalClaims)
	for _, v := range resp.Confidence.Verdicts {
		fmt.Printf("%s %q (evidence: %s:%s)\n", v.Status, v.Claim, v.Evidence.Type, v.Evidence.Slug)
	}
	// Output:
	// waiting 1s
	// Find the constraint first [framework:theory-of-constraints].
	// confidence: high 1 of 1
	// verified "Find the constraint first." (evidence: framework:theory-of-constraints)
}

func ExampleClient_ChatStream() {
	srv := fakeService()
	defer srv.Close()

	c := client.New(srv.URL, client.WithAPIKey("sk_service_example"), client.WithSleep(noSleep))
	for ev, err := range c.ChatStream(context.Background(), client.ChatRequest{Message: "Orders ship late"}) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch e := ev.(type) {
		case client.HopEvent:
			fmt.Println("tool", e.Hop, e.Tool)
		case client.DeltaEvent:
			fmt.Printf("text %q\n", e.Text)
		case client.FinalEvent:
			fmt.Println("final, confidence", e.Confidence.Level)
		}
	}
	// Output:
	// waiting 1s
	// tool 0 search_knowledge
	// text "Find the constraint "
	// text "first [framework:theory-of-constraints]."
	// final, confidence high
}

func ExampleFindTokens() {
	text := "Protect the bottleneck [framework:theory-of-constraints]; queues explode near full load " +
		"[paper:kingman-1961-heavy-traffic] [framework:theory-of-constraints]."
	for _, t := range client.FindTokens(text) {
		fmt.Println(t.Type, t.Slug)
	}
	// Output:
	// framework theory-of-constraints
	// paper kingman-1961-heavy-traffic
}

func ExampleClient_ResolveAll() {
	srv := fakeService()
	defer srv.Close()

	c := client.New(srv.URL)
	tokens := client.FindTokens("See [framework:drum-buffer-rope], [paper:nope] and [blog:focus].")
	cards, err := c.ResolveAll(context.Background(), tokens) // any number, 100 per request
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, card := range cards.Resolved {
		fmt.Println("card:", card.Token, card.Title)
	}
	for _, u := range cards.Unresolved {
		fmt.Println("plain text:", u.Type+":"+u.Slug, u.Reason)
	}
	// Output:
	// card: framework:drum-buffer-rope DRUM-BUFFER-ROPE
	// card: blog:focus FOCUS
	// plain text: paper:nope not_found
}

func ExampleIsUnauthorized() {
	srv := fakeService()
	defer srv.Close()

	c := client.New(srv.URL, client.WithAPIKey("sk_service_wrong"))
	_, err := c.Chat(context.Background(), client.ChatRequest{Message: "hello"})
	fmt.Println(client.IsUnauthorized(err))
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Status, apiErr.Type, apiErr.Detail, apiErr.RequestID)
	}
	// Output:
	// true
	// 401 urn:assistant:problem:unauthorized The API key is not valid. r-401
}

func ExampleWithRetry() {
	// A service whose model provider is down: every chat is a 502.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, `{"type":"urn:assistant:problem:unavailable","title":"Bad Gateway","status":502,"detail":"The model provider is unavailable. Retry with backoff.","request_id":"r-502"}`)
	}))
	defer srv.Close()

	c := client.New(srv.URL, client.WithAPIKey("sk_service_example"),
		client.WithRetry(client.RetryPolicy{MaxAttempts: 4, BaseBackoff: time.Second, MaxBackoff: 3 * time.Second, Jitter: 0.5}),
		client.WithRandom(func() float64 { return 0 }), // no jitter drawn, for a stable output
		client.WithSleep(noSleep))
	_, err := c.Chat(context.Background(), client.ChatRequest{Message: "hello"})
	fmt.Println(client.IsUnavailable(err))
	fmt.Println(err)
	// Output:
	// waiting 1s
	// waiting 2s
	// waiting 3s
	// true
	// assistant: 502 Bad Gateway: The model provider is unavailable. Retry with backoff. (request r-502)
}
