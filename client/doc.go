// Package client is the Go client of the assistant service: typed calls
// for every /api/ endpoint, chat streamed as an iterator of events,
// retries that honour Retry-After, typed problem errors, and helpers that
// find citation tokens in answers and resolve them into hover cards.
//
// Create a client with the service's address and an API key (made in the
// admin area or with `assistant keys create`):
//
//	c := client.New("http://localhost:8080", client.WithAPIKey(os.Getenv("ASSISTANT_KEY")))
//	resp, err := c.Chat(ctx, client.ChatRequest{
//		Message:  "Our packing station cannot keep up and orders ship late",
//		Vertical: "ecommerce",
//	})
//	if err != nil {
//		return err
//	}
//	fmt.Println(resp.Response, resp.Confidence.Level)
//
//	// The same turn as events: tool calls, answer text, then the answer.
//	for ev, err := range c.ChatStream(ctx, client.ChatRequest{Message: "..."}) {
//		if err != nil {
//			return err
//		}
//		if d, ok := ev.(client.DeltaEvent); ok {
//			fmt.Print(d.Text)
//		}
//	}
//
//	// Hover cards for every token of an answer, 100 per request.
//	cards, err := c.ResolveAll(ctx, client.FindTokens(resp.Response))
//
// Chat, ChatStream (before the stream starts) and Verify retry a 429
// after the Retry-After the service sends (up to RetryPolicy.MaxRetryAfter)
// and a 502 after a capped, jittered exponential backoff, at most
// RetryPolicy.MaxAttempts requests in all and never past the context's
// deadline; WithoutRetries turns this off. Other calls are never retried,
// and neither are 400, 401, 413 or any other answer. Every answer
// other than 2xx is an *Error holding the problem document; IsRateLimited,
// IsUnauthorized, IsValidation, IsTooLarge and IsUnavailable test for the
// common cases.
//
// The client uses only the standard library. docs/sdk-go.md in the
// repository walks through it.
package client
