package chat

import (
	"encoding/json"
	"testing"
)

func TestEncodeIsMarshal(t *testing.T) {
	for _, v := range []any{
		SearchResult{Query: "<b>cash</b> & margins", Hits: []SearchHit{{Token: "framework:x", Title: "X\u2028Y", Score: 0.5}}},
		EntityResult{Token: "paper:y"}, DiagnoseResult{}, map[string]string{"error": "a \"quoted\" message\n"},
		nil, 1.5, "text",
	} {
		want, _ := json.Marshal(v)
		if got := encode(v); got != string(want) {
			t.Errorf("encode(%#v) = %s, want %s", v, got, want)
		}
	}
	if got := encode(func() {}); got != "" {
		t.Errorf("encode of a func = %q, want \"\"", got)
	}
}
