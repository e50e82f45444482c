package llm

import (
	"context"
	"sync"
)

// UsageMeter adds up the usage that providers report while one request
// runs (a chat turn makes several calls: the tool loop, a model judge).
// A caller that wants the counts puts a meter in the context with
// WithUsageMeter; providers report with ReportUsage. Safe for concurrent
// use.
type UsageMeter struct {
	mu       sync.Mutex
	total    Usage
	reported bool
}

type usageMeterKey struct{}

// WithUsageMeter returns ctx carrying a new meter, and the meter.
func WithUsageMeter(ctx context.Context) (context.Context, *UsageMeter) {
	m := &UsageMeter{}
	return context.WithValue(ctx, usageMeterKey{}, m), m
}

// ReportUsage adds u to the meter of ctx, if it has one. Providers call it
// once per upstream call with the counts the upstream answered.
func ReportUsage(ctx context.Context, u Usage) {
	m, _ := ctx.Value(usageMeterKey{}).(*UsageMeter)
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.total.InputTokens += u.InputTokens
	m.total.OutputTokens += u.OutputTokens
	m.reported = true
}

// Total returns the usage reported so far, and whether any provider
// reported (the builtin model reports nothing: it has no tokens).
func (m *UsageMeter) Total() (Usage, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total, m.reported
}
