package chat_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/chat"
)

func TestZZGolden(t *testing.T) {
	out := os.Getenv("GOLDEN_OUT")
	if out == "" {
		t.Skip()
	}
	s, db := fullServiceTB(t)
	_ = db
	var b strings.Builder
	for _, mode := range []string{"operator", "customer", "support", "success"} {
		var history []chat.HistoryItem
		for _, c := range rubricCases {
			r, _, err := s.Run(context.Background(), chat.Request{Message: c.question, Mode: mode, History: history}, nil)
			if err != nil {
				t.Fatal(err)
			}
			j, _ := json.Marshal(r)
			b.Write(j)
			b.WriteByte('\n')
			if len(history) < 6 {
				history = append(history, chat.HistoryItem{Role: "user", Content: c.question}, chat.HistoryItem{Role: "assistant", Content: r.Response})
			}
		}
	}
	os.WriteFile(out, []byte(b.String()), 0o644)
}
