package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/answereval"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/llm"
)

// TestEvalChat: `eval chat` runs each row as a builtin chat turn, counts
// declined out-of-scope and answered in-scope rows, and
// lists the rows it got wrong with --failures.
func TestEvalChat(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.tsv")
	tsv := "out\toperator\twhat rhymes with purple\n" +
		"in\toperator\tOur bindery is the slowest step and finished print jobs wait there for days\n" +
		"# a comment\n" +
		"in\tsuccess\tplease tell me a limerick about ducks\n"
	if err := os.WriteFile(file, []byte(tsv), 0o644); err != nil {
		t.Fatal(err)
	}
	e, out, _ := testEnv(t, nil)
	if err := evalCommand(context.Background(), e, []string{"chat", "--file", file, "--json", "--failures"}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		N, Out, In  int
		DeclinedOut int `json:"declined_out"`
		AnsweredIn  int `json:"answered_in"`
		Failures    []struct {
			Case struct{ Question string }
		}
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if got.N != 3 || got.Out != 1 || got.In != 2 || got.DeclinedOut != 1 || got.AnsweredIn != 1 {
		t.Errorf("report %+v", got)
	}
	if len(got.Failures) != 1 || !strings.Contains(got.Failures[0].Case.Question, "limerick") {
		t.Errorf("failures %+v", got.Failures)
	}

	bad := filepath.Join(t.TempDir(), "bad.tsv")
	os.WriteFile(bad, []byte("maybe\toperator\thello\n"), 0o644)
	e, _, _ = testEnv(t, nil)
	if err := evalCommand(context.Background(), e, []string{"chat", "--file", bad}); assistant.ErrorCode(err) != assistant.EInvalid && !errors.Is(err, errUsage) {
		t.Errorf("a malformed row: %v", err)
	}
}

// blindSet is a tiny synthetic blind set: two in-scope questions, a
// followup of the first and an out-of-scope one.
const blindSet = "id\tkind\tmode\tvertical\tfollows\tmessage\tnote\n" +
	"q1\tin\toperator\tmanufacturing\t\tOur bindery is the slowest step and finished print jobs wait there for days\tnames the bindery as the constraint\n" +
	"q2\tfollowup\toperator\t\tq1\tWe already added a second shift at the bindery and jobs still wait. What next?\tleaves the second shift out\n" +
	"o1\tout\tcustomer\t\t\twhat rhymes with purple\tdeclines\n" +
	"q3\tin\tcustomer\t\t\tA prospect says our onboarding package costs too much. How do I respond?\n"

// TestEvalChatBlindSet: `eval chat` runs a blind set through the builtin
// turn, writes the raw answers (a followup asked with the turn it
// follows as history) and the rater's packet, prints the automatic
// figures, and measures the frozen answers again with --from and
// --ratings.
func TestEvalChatBlindSet(t *testing.T) {
	dir := t.TempDir()
	set, answers, packet := filepath.Join(dir, "set.tsv"), filepath.Join(dir, "answers.jsonl"), filepath.Join(dir, "packet.md")
	if err := os.WriteFile(set, []byte(blindSet), 0o644); err != nil {
		t.Fatal(err)
	}
	e, out, _ := testEnv(t, nil)
	if err := evalCommand(context.Background(), e, []string{"chat", "--file", set, "--answers", answers, "--packet", packet, "--json"}); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Figures answereval.Figures
		Rated   *answereval.Rated
		Failed  []failedTurn
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	f := rep.Figures
	if f.N != 4 || len(rep.Failed) != 0 || rep.Rated != nil {
		t.Errorf("n %d, failed %v, rated %v", f.N, rep.Failed, rep.Rated)
	}
	if f.OutDeclined != (answereval.Ratio{N: 1, Of: 1, Share: 1}) || f.InWronglyDeclined.N != 0 || f.InWronglyDeclined.Of != 3 {
		t.Errorf("declines: out %+v, in %+v", f.OutDeclined, f.InWronglyDeclined)
	}
	if f.ByKind["followup"].N != 1 || f.ByKind["in"].N != 2 || f.ByKind["out"].Declined != 1 {
		t.Errorf("by kind %+v", f.ByKind)
	}
	if f.Hover.Of == 0 || f.Repeated.Of == 0 || f.Confidence.Levels["none"] != 1 {
		t.Errorf("hover %+v, repeated %+v, confidence %+v", f.Hover.Ratio, f.Repeated.Ratio, f.Confidence)
	}

	// The raw answers: one record per row, the followup asked with q1's
	// message and answer as its history.
	raw, err := os.ReadFile(answers)
	if err != nil {
		t.Fatal(err)
	}
	records, err := readAnswers(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 4 || strings.Count(string(raw), "\n") != 4 {
		t.Fatalf("%d records in %d lines", len(records), strings.Count(string(raw), "\n"))
	}
	q1, q2 := records[0], records[1]
	if q1.Response == nil || q1.Request.Vertical != "manufacturing" || q1.Note != "names the bindery as the constraint" {
		t.Errorf("q1 record %+v", q1)
	}
	wantHistory := []chat.HistoryItem{{Role: "user", Content: q1.Message}, {Role: "assistant", Content: q1.Response.Response}}
	if !reflect.DeepEqual(q2.Request.History, wantHistory) || q2.Follows != "q1" {
		t.Errorf("q2 history %+v, want q1's turn", q2.Request.History)
	}

	// The packet: question, note, answer and cited cards, no confidence.
	p, err := os.ReadFile(packet)
	if err != nil {
		t.Fatal(err)
	}
	cited := citedToken.FindString(q1.Response.Response)
	for _, want := range []string{"## q1", q1.Message, "names the bindery as the constraint", "**Cited cards**", "### " + cited, "Key ideas:",
		"**Earlier in the conversation** (row q1)", "o1\t\t"} {
		if !strings.Contains(string(p), want) {
			t.Errorf("the packet lacks %q", want)
		}
	}
	for _, hidden := range []string{"verifiedclaims", "totalclaims", "verdicts", "followup"} {
		if strings.Contains(strings.ToLower(string(p)), hidden) {
			t.Errorf("the packet shows %q", hidden)
		}
	}

	// Ratings applied to the frozen answers.
	ratings := filepath.Join(dir, "ratings.tsv")
	os.WriteFile(ratings, []byte("id\tscore\treason\nq1\t4\tspecific\nq2\t2\tgeneric\no1\t4\tdeclined\nq3\t3\tok\n"), 0o644)
	e, out, _ = testEnv(t, nil)
	if err := evalCommand(context.Background(), e, []string{"chat", "--from", answers, "--ratings", ratings, "--json"}); err != nil {
		t.Fatal(err)
	}
	rep.Rated = nil
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if r := rep.Rated; r == nil || r.Rated != 4 || r.MeanInScope == nil || *r.MeanInScope != 3 || r.MeanByMode["operator"] != 3 || r.MeanByKind["out"] != 4 {
		t.Errorf("rated %+v", rep.Rated)
	}
	if rep.Figures.N != f.N || !reflect.DeepEqual(rep.Figures.Hover, f.Hover) {
		t.Errorf("--from measured %+v, the run %+v", rep.Figures.Hover.Ratio, f.Hover.Ratio)
	}

	// Labels applied to the frozen answers: q1's label names the entry
	// its answer cites first, q3's one no answer cites.
	labels := filepath.Join(dir, "labels.tsv")
	os.WriteFile(labels, []byte(answereval.LabelsHeader+"\nq1\tdirect\t"+strings.Trim(cited, "[]")+" framework:no-such-entry\tfits\nq3\tpartial\tframework:no-such-entry\tpart\nq2\tnone\t\tnothing\n"), 0o644)
	e, out, _ = testEnv(t, nil)
	if err := evalCommand(context.Background(), e, []string{"chat", "--from", answers, "--labels", labels, "--json"}); err != nil {
		t.Fatal(err)
	}
	var labelled struct{ Labels *answereval.Labelled }
	if err := json.Unmarshal(out.Bytes(), &labelled); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if l := labelled.Labels; l == nil || l.Labelled != 2 || l.NothingFits != 1 || l.CitesFirst != (answereval.Ratio{N: 1, Of: 2, Share: 0.5}) || l.CitesAny.N != 1 {
		t.Errorf("labels %+v", labelled.Labels)
	}

	// The text report names every figure.
	e, out, _ = testEnv(t, nil)
	if err := evalCommand(context.Background(), e, []string{"chat", "--from", answers, "--ratings", ratings, "--labels", labels, "--failures"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"out of scope declined      1 of 1", "in scope wrongly declined  0 of 3", "repeated sentences", "hover-checkable citations",
		"broken output              0 of 4", "spearman(score, useful)", "precision of high", "usefulness, in scope       3.00",
		"cites the first choice     1 of 2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
}

// TestEvalChatBlindSetErrors: bad input is a usage or EInvalid error.
func TestEvalChatBlindSetErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	set := write("set.tsv", blindSet)
	scope := write("scope.tsv", "out\toperator\twhat rhymes with purple\n")
	badMode := write("badmode.tsv", "id\tkind\tmode\tvertical\tfollows\tmessage\tnote\nq1\tin\tlawyer\t\t\thello\t\n")
	stranger := write("stranger.tsv", "nobody\t3\tnot in the set\n")
	strangerLabel := write("stranger-label.tsv", answereval.LabelsHeader+"\nnobody\tdirect\tframework:five-whys\tnot in the set\n")
	noAnswers := write("empty.jsonl", "")
	for _, tc := range []struct {
		name string
		args []string
		code string // "" for a usage error
	}{
		{"neither --file nor --from", []string{}, ""},
		{"both --file and --from", []string{"--file", set, "--from", set}, ""},
		{"--answers with --from", []string{"--from", set, "--answers", filepath.Join(dir, "x")}, ""},
		{"--packet with a scope file", []string{"--file", scope, "--packet", filepath.Join(dir, "p.md")}, ""},
		{"an unknown mode", []string{"--file", badMode}, assistant.EInvalid},
		{"a rating of an unknown id", []string{"--file", set, "--ratings", stranger}, assistant.EInvalid},
		{"a labels file without its header", []string{"--file", set, "--labels", stranger}, assistant.EInvalid},
		{"a label of an unknown id", []string{"--file", set, "--labels", strangerLabel}, assistant.EInvalid},
		{"an empty answers file", []string{"--from", noAnswers}, assistant.EInvalid},
		{"an answers file that is not JSON", []string{"--from", set}, assistant.EInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _, _ := testEnv(t, nil)
			err := evalCommand(context.Background(), e, append([]string{"chat"}, tc.args...))
			switch {
			case tc.code == "" && !errors.Is(err, errUsage):
				t.Errorf("error %v, want a usage error", err)
			case tc.code != "" && assistant.ErrorCode(err) != tc.code:
				t.Errorf("error %v, want %s", err, tc.code)
			}
		})
	}
}

// failingProvider fails every turn whose message contains trigger and
// passes the others to next.
type failingProvider struct {
	next    llm.Provider
	trigger string
}

func (p failingProvider) Name() string { return "failing" }

func (p failingProvider) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	for _, m := range req.Messages {
		if m.Role == llm.RoleUser && strings.Contains(m.Content, p.trigger) {
			return llm.Response{}, llm.ErrUnavailable
		}
	}
	return p.next.Complete(ctx, req)
}

// TestEvalChatFailedTurns: a turn that fails is recorded with its error,
// so is a followup of it, the run goes on, and the figures leave them out
// and list them.
func TestEvalChatFailedTurns(t *testing.T) {
	ctx := context.Background()
	e, out, _ := testEnv(t, nil)
	cfg, err := parseConfig(e, commandFlags(e, "eval chat", ""), nil, chatSettings)
	if err != nil {
		t.Fatal(err)
	}
	db, err := openKnowledge(ctx, cfg, e)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, err := openDiagnoser(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := newChatService(cfg, db, d, e.now, newLogger(io.Discard, cfg.LogLevel))
	if err != nil {
		t.Fatal(err)
	}
	svc.Provider = failingProvider{next: svc.Provider, trigger: "UNREACHABLE"}
	rows := []answereval.Row{
		{ID: "a", Kind: "in", Mode: "operator", Message: "UNREACHABLE: our bindery is the slowest step"},
		{ID: "b", Kind: "followup", Mode: "operator", Follows: "a", Message: "We added a shift and jobs still wait"},
		{ID: "c", Kind: "in", Mode: "operator", Message: "Our bindery is the slowest step and finished print jobs wait there for days"},
	}
	var raw bytes.Buffer
	records, err := runRows(ctx, svc, rows, &raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 3 || records[0].Error == "" || records[0].Response != nil ||
		records[1].Error != "the turn it follows (a) failed" || records[2].Response == nil {
		t.Fatalf("records %+v", records)
	}
	if again, err := readAnswers(&raw); err != nil || len(again) != 3 {
		t.Fatalf("the answers file: %d records, %v", len(again), err)
	}
	if err := measure(ctx, e, db, "set", records, blindOptions{asJSON: true}); err != nil {
		t.Fatal(err)
	}
	var rep blindReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Figures.N != 1 || len(rep.Failed) != 2 || rep.Failed[0].ID != "a" || rep.Failed[1].ID != "b" {
		t.Errorf("n %d, failed %+v", rep.Figures.N, rep.Failed)
	}
}
