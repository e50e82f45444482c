package sqlite

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/telemetry"
)

// Attributes of the spans of a recorded turn.
const (
	attributeTurns          = attribute.Key("assistant.turns")
	attributeCitationEvents = attribute.Key("assistant.citation_events")
)

// RecordTurn implements assistant.AccessStore: a chat turn's usage row and
// its citation events in one transaction (D5), either both or neither.
//
// Turns recorded at the same time share a transaction (a group commit):
// the first caller writes the turns queued behind it along with its own,
// and each caller returns once the transaction holding its turn has
// committed, so a turn is never acknowledged before it is stored. SQLite
// writes one transaction at a time, and a commit costs about as much as
// the rows in it, so under concurrent chats fewer commits carry the same
// rows. A turn waits for at most one transaction ahead of its own.
//
// In a traced request, the call is a span "record turn" and the
// transaction that holds the turn, if this caller writes it, a span
// "transaction" beneath it, with the turns and citation events it holds.
func (s *DB) RecordTurn(ctx context.Context, usage assistant.UsageRecord, citations []assistant.CitationEvent) (err error) {
	if telemetry.Tracing(ctx) {
		var span trace.Span
		ctx, span = telemetry.Start(ctx, "record turn", trace.SpanKindClient)
		span.SetAttributes(semconv.DBSystemNameSQLite, attributeCitationEvents.Int(len(citations)))
		defer func() { telemetry.Fail(span, err, ""); span.End() }()
	}
	// Checked here, so that a turn that cannot be stored never fails the
	// turns it would share a transaction with.
	if err := validCitations(citations); err != nil {
		return err
	}
	t := &queuedTurn{usage: usage, citations: citations, done: make(chan error, 1)}
	q := &s.turns
	q.mu.Lock()
	q.queue = append(q.queue, t)
	lead := !q.writing
	q.writing = true
	q.mu.Unlock()
	if lead {
		s.writeQueued(context.WithoutCancel(ctx))
	}
	for {
		err := <-t.done
		if !errors.Is(err, errYourTurnToWrite) {
			return err
		}
		s.writeQueued(context.WithoutCancel(ctx))
	}
}

// turnQueue holds the turns waiting for a transaction.
type turnQueue struct {
	mu      sync.Mutex
	queue   []*queuedTurn // in arrival order
	writing bool          // a caller is writing (or about to write) a batch
}

// queuedTurn is one RecordTurn call waiting for its transaction; done
// receives the transaction's result, or errYourTurnToWrite when the
// caller is to write the next batch itself.
type queuedTurn struct {
	usage     assistant.UsageRecord
	citations []assistant.CitationEvent
	done      chan error
}

// errYourTurnToWrite hands the writing of the next batch to the caller at
// the head of the queue. It never leaves RecordTurn.
var errYourTurnToWrite = errors.New("write the next batch")

// maxTurnsPerBatch bounds the turns written in one transaction.
const maxTurnsPerBatch = 64

// writeQueued writes one batch from the head of the queue (which holds the
// caller's own turn), tells each of its turns the result, and hands the
// writing of the next batch to the first turn still queued, if any.
func (s *DB) writeQueued(ctx context.Context) {
	q := &s.turns
	q.mu.Lock()
	batch := q.queue[:min(len(q.queue), maxTurnsPerBatch)]
	q.queue = append([]*queuedTurn(nil), q.queue[len(batch):]...)
	q.mu.Unlock()

	if err := s.writeTurns(ctx, batch); err != nil && len(batch) > 1 {
		// One transaction per turn, so that whatever failed fails only
		// the turn it belongs to.
		for _, t := range batch {
			t.done <- s.writeTurns(ctx, []*queuedTurn{t})
		}
	} else {
		for _, t := range batch {
			t.done <- err
		}
	}

	q.mu.Lock()
	if len(q.queue) > 0 {
		q.queue[0].done <- errYourTurnToWrite
	} else {
		q.writing = false
	}
	q.mu.Unlock()
}

// writeTurns stores the usage rows and citation events of turns in one
// transaction.
func (s *DB) writeTurns(ctx context.Context, turns []*queuedTurn) (err error) {
	usage := make([]assistant.UsageRecord, len(turns))
	var citations []assistant.CitationEvent
	for i, t := range turns {
		usage[i] = t.usage
		citations = append(citations, t.citations...)
	}
	if telemetry.Tracing(ctx) {
		var span trace.Span
		ctx, span = telemetry.Start(ctx, "transaction", trace.SpanKindClient)
		span.SetAttributes(semconv.DBSystemNameSQLite, attributeTurns.Int(len(turns)), attributeCitationEvents.Int(len(citations)))
		defer func() { telemetry.Fail(span, err, ""); span.End() }()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ptx := preparedTx{s, tx}
	if err := insertUsage(ctx, ptx, usage...); err != nil {
		return err
	}
	if err := insertCitations(ctx, ptx, citations); err != nil {
		return err
	}
	return tx.Commit()
}

// rowsPerInsert bounds the rows of one INSERT, well under SQLite's limit
// on bound parameters.
const rowsPerInsert = 200

// insertUsage stores usage rows, with one statement per rowsPerInsert.
func insertUsage(ctx context.Context, db execer, rows ...assistant.UsageRecord) error {
	for chunk := range chunks(rows, rowsPerInsert) {
		args := make([]any, 0, 8*len(chunk))
		for _, u := range chunk {
			args = append(args, ms(u.At), u.Workspace, u.KeyID, u.Endpoint, u.Mode, u.Source, u.Status,
				float64(u.Latency)/float64(time.Millisecond))
		}
		q := insertRows(`INSERT INTO usage (at, workspace, key_id, endpoint, mode, source, status, latency_ms) VALUES `,
			"(?, ?, ?, ?, ?, ?, ?, ?)", len(chunk), "")
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// insertCitations stores events, with one statement per rowsPerInsert,
// ignoring one already stored for the same response and token. An event
// with an invalid token is EInvalid, and nothing is stored.
func insertCitations(ctx context.Context, db execer, events []assistant.CitationEvent) error {
	if err := validCitations(events); err != nil {
		return err
	}
	for chunk := range chunks(events, rowsPerInsert) {
		args := make([]any, 0, 5*len(chunk))
		for _, ev := range chunk {
			args = append(args, ev.ResponseID, ev.Workspace, ev.Source, ev.Token.String(), ev.At.UnixMilli())
		}
		q := insertRows(insertCitationPrefix, citationRow, len(chunk), insertCitationSuffix)
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// The INSERT of citation events, around its rows.
const (
	insertCitationPrefix = `INSERT INTO citation_events (response_id, workspace, source, token, cited_at) VALUES `
	citationRow          = "(?, ?, ?, ?, ?)"
	insertCitationSuffix = ` ON CONFLICT (response_id, token) DO NOTHING`
)

// validCitations is EInvalid when an event's token is not a valid
// citation token.
func validCitations(events []assistant.CitationEvent) error {
	for _, ev := range events {
		if !ev.Token.Valid() {
			return assistant.Errorf(assistant.EInvalid, "%q is not a valid citation token", ev.Token)
		}
	}
	return nil
}

// insertRows is an INSERT of n rows: prefix, row n times separated by
// commas, then suffix.
func insertRows(prefix, row string, n int, suffix string) string {
	var b strings.Builder
	b.Grow(len(prefix) + n*(len(row)+2) + len(suffix))
	b.WriteString(prefix)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	b.WriteString(suffix)
	return b.String()
}

// chunks yields s in pieces of at most n.
func chunks[T any](s []T, n int) func(func([]T) bool) {
	return func(yield func([]T) bool) {
		for len(s) > 0 {
			k := min(n, len(s))
			if !yield(s[:k]) {
				return
			}
			s = s[k:]
		}
	}
}
