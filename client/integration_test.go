package client

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

const packingQuestion = "Our packing station cannot keep up and orders ship late"

// TestRealChatJSONAndStream: a builtin chat answers with citations, a
// trace and verdicts; the streamed turn yields hops, deltas that add up to
// the answer, and a final event equal to the JSON answer.
func TestRealChatJSONAndStream(t *testing.T) {
	c := strictClient(t, true)
	ctx := testContext(t)
	req := ChatRequest{Message: packingQuestion, Mode: ModeOperator, Vertical: "ecommerce", Source: "client-test"}
	resp, err := c.Chat(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(FindTokens(resp.Response)) == 0 || len(resp.ReasoningTrace) == 0 || len(resp.RagHits) == 0 {
		t.Fatalf("an answer without tokens, trace or hits: %+v", resp)
	}
	if resp.Confidence.TotalClaims == 0 || len(resp.Confidence.Verdicts) != resp.Confidence.TotalClaims {
		t.Fatalf("confidence: %+v", resp.Confidence)
	}
	var withEvidence bool
	for _, v := range resp.Confidence.Verdicts {
		withEvidence = withEvidence || (v.Evidence != nil && v.Evidence.Snippet != "")
		if v.Basis != "" && v.Status != StatusUnsupported {
			t.Errorf("basis on a %s verdict: %+v", v.Status, v)
		}
	}
	if !withEvidence {
		t.Error("no verdict carries evidence")
	}

	var hops, deltas int
	var text strings.Builder
	var final *ChatResponse
	for ev, err := range c.ChatStream(ctx, req) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case HopEvent:
			if e.Hop != hops {
				t.Errorf("hop %d arrived as number %d", e.Hop, hops)
			}
			hops++
		case DeltaEvent:
			deltas++
			text.WriteString(e.Text)
		case FinalEvent:
			final = &e.ChatResponse
		default:
			t.Fatalf("unexpected event %T", ev)
		}
	}
	if final == nil || hops == 0 || deltas == 0 {
		t.Fatalf("stream: %d hops, %d deltas, final %v", hops, deltas, final != nil)
	}
	if !reflect.DeepEqual(*final, *resp) {
		t.Errorf("the streamed final differs from the JSON answer:\n%+v\n%+v", *final, *resp)
	}
	if text.String() != final.Response {
		t.Errorf("the deltas do not add up to the answer:\n%q\n%q", text.String(), final.Response)
	}
	if hops != len(final.ReasoningTrace) {
		t.Errorf("%d hop events for a trace of %d", hops, len(final.ReasoningTrace))
	}

	// Breaking out early is allowed and closes the stream.
	for ev, err := range c.ChatStream(ctx, req) {
		if err != nil || ev == nil {
			t.Fatal(ev, err)
		}
		break
	}
}

// TestRealVerify: the documented example, one verified claim and one
// contradicted by the cited work's year.
func TestRealVerify(t *testing.T) {
	c := strictClient(t, true)
	conf, err := c.Verify(testContext(t), VerifyRequest{
		Text: "Kingman showed that waiting time explodes as utilization approaches one [paper:kingman-1961-heavy-traffic]. " +
			"Kingman published the heavy traffic result in 1973 [paper:kingman-1961-heavy-traffic].",
		Threshold: Float64(0.6), Source: "client-test",
	})
	if err != nil {
		t.Fatal(err)
	}
	if conf.TotalClaims != 2 || len(conf.Verdicts) != 2 || conf.Verdicts[1].Status != StatusContradicted {
		t.Fatalf("verify: %+v", conf)
	}
	if e := conf.Verdicts[1].Evidence; e == nil || e.Slug != "kingman-1961-heavy-traffic" {
		t.Errorf("contradiction without its evidence: %+v", conf.Verdicts[1])
	}

	// A citation that does not resolve is a 400 naming it, not retried.
	_, err = c.Verify(testContext(t), VerifyRequest{Text: "Queues grow when utilization approaches one.", Citations: []string{"paper:nope"}})
	if e, ok := AsError(err); !ok || !IsValidation(err) || e.Type != ProblemValidation || len(e.Errors) != 1 || e.Errors[0].Location != "body.citations[0]" {
		t.Fatalf("want a 400 naming body.citations[0], got %v", err)
	}
}

// TestRealResolveAll: 150 tokens (140 real ones, 10 unknown, duplicates
// repeated) resolve through ResolveAll in two requests, merged in input
// order.
func TestRealResolveAll(t *testing.T) {
	c := strictClient(t, false)
	ctx := testContext(t)
	var tokens []Token
	for page := 0; len(tokens) < 140; page++ {
		// Search returns at most 50; three types of distinct entities.
		for _, typ := range []string{TypeFramework, TypePaper, TypeBlog} {
			res, err := c.Search(ctx, SearchParams{Q: []string{"customers", "work", "team", "growth"}[page], Type: typ, Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Results {
				tokens = append(tokens, Token{Type: r.Type, Slug: r.Slug})
			}
		}
		if page == 3 {
			break
		}
	}
	tokens = dedupe(tokens)
	if len(tokens) < 110 {
		t.Fatalf("only %d distinct entities found", len(tokens))
	}
	tokens = tokens[:110]
	for i := range 10 {
		tokens = append(tokens, Token{Type: TypePaper, Slug: fmt.Sprintf("no-such-paper-%d", i)})
	}
	input := append(append([]Token{}, tokens...), tokens[:5]...) // duplicates

	calls := 0
	counting := *c
	counting.hc = countingClient(&calls)
	res, err := counting.ResolveAll(ctx, input)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("%d resolve requests for 120 distinct tokens, want 2", calls)
	}
	if len(res.Resolved) != 110 || len(res.Unresolved) != 10 {
		t.Fatalf("%d resolved, %d unresolved", len(res.Resolved), len(res.Unresolved))
	}
	for i, card := range res.Resolved {
		if card.Token != tokens[i].String() || card.Title == "" {
			t.Fatalf("resolved[%d] = %s, want %s", i, card.Token, tokens[i])
		}
	}
	for i, u := range res.Unresolved {
		if u.Slug != tokens[110+i].Slug || u.Reason != ReasonNotFound {
			t.Fatalf("unresolved[%d] = %+v", i, u)
		}
	}

	// One call with 101 tokens is the service's 400.
	_, err = c.Resolve(ctx, tokens[:101])
	if !IsValidation(err) {
		t.Errorf("101 tokens: %v", err)
	}
}

func dedupe(ts []Token) []Token {
	seen := map[Token]bool{}
	var out []Token
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// TestRealPublicEndpoints: search, preview, leaderboard, catalog and
// knowledge stats decode strictly.
func TestRealPublicEndpoints(t *testing.T) {
	c := strictClient(t, false)
	ctx := testContext(t)

	stats, err := c.KnowledgeStats(ctx)
	if err != nil || stats.Total != stats.Frameworks+stats.Papers+stats.Blogs || stats.Total == 0 {
		t.Fatalf("stats %+v, %v", stats, err)
	}

	s, err := c.Search(ctx, SearchParams{Q: "the packing station cannot keep up", Limit: 3})
	if err != nil || len(s.Results) == 0 || len(s.Results) > 3 || s.Query == "" {
		t.Fatalf("search %+v, %v", s, err)
	}
	if s.Results[0].Token == "" || s.Results[0].Score <= 0 {
		t.Errorf("search result %+v", s.Results[0])
	}

	p, err := c.Preview(ctx, PreviewRequest{Vertical: "saas", FreeText: "trials sign up but never connect their data"})
	if err != nil || p.Match.Method != "free_text" || len(p.FrameworkApplications) < 3 || len(p.Citations) == 0 {
		t.Fatalf("preview %+v, %v", p, err)
	}
	p2, err := c.Preview(ctx, PreviewRequest{Vertical: "saas", ArchetypeID: p.Archetype.ID})
	if err != nil || p2.Match.Confidence != 1 || len(p2.Match.Alternatives) != 0 {
		t.Fatalf("structured preview %+v, %v", p2, err)
	}

	cat, err := c.Catalog(ctx)
	if err != nil || len(cat.Verticals) == 0 || len(cat.Archetypes) == 0 {
		t.Fatalf("catalog %+v, %v", cat, err)
	}

	// The window ends at the start of the current minute, so the chats of
	// this test run may not count yet; the entry's fields are checked
	// against the OpenAPI document by TestOpenAPISchemasMatchTypes.
	lb, err := c.Leaderboard(ctx, LeaderboardParams{Days: 7, Limit: 5})
	if err != nil || lb.Days != 7 || lb.Limit != 5 || lb.Entries == nil || !lb.Since.Before(lb.Until) {
		t.Fatalf("leaderboard %+v, %v", lb, err)
	}
	for i, e := range lb.Entries {
		if e.Rank != i+1 || e.Token != e.Type+":"+e.Slug || e.Citations < 1 {
			t.Errorf("leaderboard entry %+v", e)
		}
	}

	_, err = c.Leaderboard(ctx, LeaderboardParams{Days: 1000})
	e, ok := AsError(err)
	if !ok || e.StatusCode != 400 || e.Errors[0].Location != "query.days" || e.RequestID == "" {
		t.Fatalf("days=1000: %v", err)
	}

	doc, err := c.OpenAPI(ctx)
	if err != nil || !strings.Contains(string(doc), `"/api/v1/chat"`) {
		t.Fatalf("openapi: %v", err)
	}
}

// TestRealKeyAndUnauthorized: the key describes itself; a bad key and no
// key are typed 401s, never retried.
func TestRealKeyAndUnauthorized(t *testing.T) {
	c := strictClient(t, true)
	ctx := testContext(t)
	k, err := c.Key(ctx)
	if err != nil || k.Workspace != "w" || k.Name != "t" || k.KeyID == "" || k.ExpiresAt != nil || k.CreatedAt.IsZero() {
		t.Fatalf("key %+v, %v", k, err)
	}

	base, _ := startReal(t)
	calls := 0
	bad := New(base, WithAPIKey("sk_service_notakey"), WithHTTPClient(countingClient(&calls)))
	_, err = bad.Chat(ctx, ChatRequest{Message: packingQuestion})
	var apiErr *Error
	if !errors.As(err, &apiErr) || !IsUnauthorized(err) || apiErr.Type != ProblemUnauthorized || apiErr.Status != 401 || apiErr.Detail == "" || apiErr.RequestID == "" {
		t.Fatalf("want a typed 401, got %#v", err)
	}
	if calls != 1 {
		t.Errorf("a 401 was sent %d times", calls)
	}
	if _, err := New(base).Key(ctx); !IsUnauthorized(err) {
		t.Errorf("no key: %v", err)
	}
	for _, err := range New(base).ChatStream(ctx, ChatRequest{Message: packingQuestion}) {
		if !IsUnauthorized(err) {
			t.Errorf("stream without a key: %v", err)
		}
	}
}

// TestRealRateLimit: the 61st verify of a key within a minute is the
// service's 429; the client reads it as a typed error with Retry-After,
// retry_after_seconds and the RateLimit headers, and with retries on it
// waits exactly the Retry-After (observed through the sleep hook, which
// cancels instead of sleeping up to a minute).
func TestRealRateLimit(t *testing.T) {
	base, _ := startReal(t)
	ctx := testContext(t)
	c := New(base, WithAPIKey(real.key2), WithoutRetries())
	c.strict = true
	req := VerifyRequest{Text: "Waiting time grows as utilization approaches one."}
	var limited error
	for i := 0; i < 61 && limited == nil; i++ {
		if _, err := c.Verify(ctx, req); err != nil {
			limited = err
		}
	}
	e, ok := AsError(limited)
	if !ok || !IsRateLimited(limited) || e.Type != ProblemRateLimited || e.RetryAfterSeconds < 1 ||
		e.RetryAfter != time.Duration(e.RetryAfterSeconds)*time.Second || e.RateLimitPolicy != `"chat";q=60;w=60` {
		t.Fatalf("want a typed 429, got %#v", limited)
	}
	if rl, ok := ParseRateLimit(e.RateLimit); !ok || rl.Policy != "chat" || rl.Remaining != 0 || rl.Reset < 1 {
		t.Errorf("RateLimit %q", e.RateLimit)
	}

	var waits []time.Duration
	waitCtx, cancel := context.WithCancel(context.Background()) // no deadline the wait would pass
	defer cancel()
	retrying := New(base, WithAPIKey(real.key2), WithRetry(RetryPolicy{MaxRetryAfter: 2 * time.Minute}), WithSleep(func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		cancel()
		return ctx.Err()
	}))
	_, err := retrying.Verify(waitCtx, req)
	if !IsRateLimited(err) || !errors.Is(err, context.Canceled) || len(waits) != 1 || waits[0] < time.Second || waits[0] > time.Minute {
		t.Fatalf("waits %v, err %v", waits, err)
	}
	if e2, _ := AsError(err); waits[0] != e2.RetryAfter {
		t.Errorf("waited %v for a Retry-After of %v", waits[0], e2.RetryAfter)
	}
}

// TestRealChatAsync: a turn submitted with ChatAsync is queued, then
// polled with Turn until it succeeds with the chat response object; an
// unknown turn is a 404.
func TestRealChatAsync(t *testing.T) {
	c := strictClient(t, true)
	ctx := testContext(t)
	turn, err := c.ChatAsync(ctx, ChatRequest{Message: packingQuestion, Vertical: "ecommerce", Source: "client-test"})
	if err != nil {
		t.Fatal(err)
	}
	if turn.State != "queued" || !strings.HasPrefix(turn.ID, "turn_") {
		t.Fatalf("ChatAsync = %+v", turn)
	}
	for turn.State != "succeeded" && turn.State != "failed" {
		if ctx.Err() != nil {
			t.Fatalf("the turn did not complete: %+v", turn)
		}
		time.Sleep(20 * time.Millisecond)
		if turn, err = c.Turn(ctx, turn.ID); err != nil {
			t.Fatal(err)
		}
	}
	if turn.State != "succeeded" || turn.Response == nil || turn.Response.Response == "" || turn.CompletedAt == nil {
		t.Fatalf("the turn ended %+v", turn)
	}
	_, err = c.Turn(ctx, "turn_doesnotexist")
	if e, ok := AsError(err); !ok || e.StatusCode != 404 {
		t.Errorf("an unknown turn: %v", err)
	}
}
