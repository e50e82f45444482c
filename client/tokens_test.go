package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

func TestFindTokens(t *testing.T) {
	text := "Start with [framework:theory-of-constraints] and [paper:little-1961-queuing-formula]; " +
		"again [framework:theory-of-constraints], an essay [blog:graham_do-things], " +
		"not [book:x], not [framework:Upper], not framework:bare, not [paper:] and [blog:a-b_9]."
	want := []Token{
		{TypeFramework, "theory-of-constraints"}, {TypePaper, "little-1961-queuing-formula"},
		{TypeBlog, "graham_do-things"}, {TypeBlog, "a-b_9"},
	}
	if got := FindTokens(text); !reflect.DeepEqual(got, want) {
		t.Errorf("FindTokens = %v, want %v", got, want)
	}
	if got := FindTokens("no tokens here"); got != nil {
		t.Errorf("no tokens: %v", got)
	}
	if got := want[0].String(); got != "framework:theory-of-constraints" {
		t.Errorf("String = %q", got)
	}
}

func TestParseToken(t *testing.T) {
	for in, want := range map[string]Token{"paper:kingman-1961": {TypePaper, "kingman-1961"}, "[blog:a_b]": {TypeBlog, "a_b"}} {
		if got, err := ParseToken(in); err != nil || got != want {
			t.Errorf("ParseToken(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "paper", "book:x", "paper:UP", "paper:a b"} {
		if _, err := ParseToken(in); err == nil {
			t.Errorf("ParseToken(%q) accepted", in)
		}
	}
}

func TestParseRateLimit(t *testing.T) {
	if s, ok := ParseRateLimit(`"soft";r=0;t=12`); !ok || s != (RateLimitState{"soft", 0, 12}) {
		t.Errorf("%+v %v", s, ok)
	}
	for _, v := range []string{"", `"chat"`, `"chat";r=x;t=1`, `"chat";r=1`} {
		if _, ok := ParseRateLimit(v); ok {
			t.Errorf("%q accepted", v)
		}
	}
}

// TestResolveAllBatches: 250 distinct tokens (and duplicates) go out in
// requests of 100, 100 and 50, merged in input order; no tokens, no
// request.
func TestResolveAllBatches(t *testing.T) {
	var sizes []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Tokens []Token }
		json.NewDecoder(r.Body).Decode(&body)
		sizes = append(sizes, len(body.Tokens))
		out := ResolveResponse{Resolved: []EntityCard{}, Unresolved: []UnresolvedToken{}}
		for _, tk := range body.Tokens {
			if strings.HasSuffix(tk.Slug, "7") {
				out.Unresolved = append(out.Unresolved, UnresolvedToken{tk.Type, tk.Slug, ReasonNotFound})
			} else {
				out.Resolved = append(out.Resolved, EntityCard{Type: tk.Type, Slug: tk.Slug, Token: tk.String()})
			}
		}
		json.NewEncoder(w).Encode(out)
	}))
	defer srv.Close()
	c := New(srv.URL)

	var in []Token
	for i := range 250 {
		in = append(in, Token{TypePaper, fmt.Sprintf("p%d", i)})
	}
	res, err := c.ResolveAll(context.Background(), append(in, in[:30]...))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sizes, []int{100, 100, 50}) {
		t.Errorf("batches %v", sizes)
	}
	var resolved, unresolved []string
	for _, tk := range in {
		if strings.HasSuffix(tk.Slug, "7") {
			unresolved = append(unresolved, tk.Slug)
		} else {
			resolved = append(resolved, tk.String())
		}
	}
	var gotR, gotU []string
	for _, c := range res.Resolved {
		gotR = append(gotR, c.Token)
	}
	for _, u := range res.Unresolved {
		gotU = append(gotU, u.Slug)
	}
	if !reflect.DeepEqual(gotR, resolved) || !reflect.DeepEqual(gotU, unresolved) {
		t.Errorf("merge out of order:\n%v\n%v", gotR, gotU)
	}

	sizes = nil
	res, err = c.ResolveAll(context.Background(), nil)
	if err != nil || sizes != nil || res.Resolved == nil || len(res.Resolved)+len(res.Unresolved) != 0 {
		t.Errorf("no tokens: %+v, %v, %d requests", res, err, len(sizes))
	}
}
