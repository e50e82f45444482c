package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// Limits of a delivery.
const (
	// RequestTimeout bounds one attempt, from connect to the end of the
	// response's headers and the bounded read of its body.
	RequestTimeout = 10 * time.Second
	// MaxResponseBytes is how much of a response body is read (and
	// dropped); a receiver's status is what counts.
	MaxResponseBytes = 64 << 10
	// maxErrorLength bounds the error text kept in the delivery log.
	maxErrorLength = 300
)

// Backoff is the retry schedule: after the n-th failed attempt the next
// comes Base*2^(n-1) later, at most Max, each delay drawn uniformly from
// its upper half (jitter); a delivery still failing once Period has passed
// since its event is marked failed (a manual resend starts it again).
type Backoff struct {
	Base, Max, Period time.Duration
}

// DefaultBackoff retries for three days: 5s, 10s, 20s, ... up to an hour
// between attempts, about 80 attempts in all.
var DefaultBackoff = Backoff{Base: 5 * time.Second, Max: time.Hour, Period: 72 * time.Hour}

// Next returns when the attempt after failed attempt n (from 1) of an
// event created at created happens, or the zero time when the period is
// over. r is a number in [0, 1).
func (b Backoff) Next(n int, created, now time.Time, r float64) time.Time {
	d := b.Max
	if n < 62 {
		d = min(b.Max, time.Duration(float64(b.Base)*math.Pow(2, float64(n-1))))
	}
	d = d/2 + time.Duration(r*float64(d/2))
	next := now.Add(d)
	if next.Sub(created) > b.Period {
		return time.Time{}
	}
	return next
}

// Worker delivers the outbox. Several workers (one per instance) share a
// store: each delivery is leased to one worker at a time, and a worker
// that dies loses its leases when they run out, so another takes over.
type Worker struct {
	Store  assistant.WebhookStore
	Sealer *Sealer
	Client *http.Client // NewClient's, for its guarded dialer
	Logger *slog.Logger
	Now    func() time.Time
	// Owner names this worker in leases (unique per process).
	Owner string
	// Optional, with defaults: Lease (30 seconds: longer than an attempt),
	// PerEndpoint (4 deliveries in flight per endpoint, across workers),
	// Concurrency (16 in flight in this worker), Poll (1 second between
	// claims when idle), Backoff (DefaultBackoff), Rand (math/rand/v2).
	Lease       time.Duration
	PerEndpoint int
	Concurrency int
	Poll        time.Duration
	Backoff     Backoff
	Rand        func() float64
	// UserAgent is sent with every delivery.
	UserAgent string

	wake chan struct{}
	once sync.Once
}

func (w *Worker) init() {
	w.once.Do(func() {
		w.wake = make(chan struct{}, 1)
		if w.Lease <= 0 {
			w.Lease = 30 * time.Second
		}
		if w.PerEndpoint <= 0 {
			w.PerEndpoint = 4
		}
		if w.Concurrency <= 0 {
			w.Concurrency = 16
		}
		if w.Poll <= 0 {
			w.Poll = time.Second
		}
		if w.Backoff == (Backoff{}) {
			w.Backoff = DefaultBackoff
		}
		if w.Rand == nil {
			w.Rand = rand.Float64
		}
		if w.Logger == nil {
			w.Logger = slog.New(slog.DiscardHandler)
		}
	})
}

// Wake makes a waiting worker claim at once (an event was just written).
func (w *Worker) Wake() {
	w.init()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends, then waits for the attempts in flight.
func (w *Worker) Run(ctx context.Context) {
	w.init()
	slots := make(chan struct{}, w.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		free := w.Concurrency - len(slots)
		var jobs []assistant.DeliveryJob
		if free > 0 {
			var err error
			jobs, err = w.Store.ClaimDeliveries(ctx, w.Owner, w.Now(), w.Lease, free, w.PerEndpoint)
			if err != nil && ctx.Err() == nil {
				w.Logger.Warn("webhook deliveries: claim failed", "err", err)
			}
		}
		for _, j := range jobs {
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots; w.Wake() }()
				w.deliver(context.WithoutCancel(ctx), j)
			}()
		}
		if len(jobs) > 0 && len(jobs) == free {
			continue // more may be due
		}
		t := time.NewTimer(w.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-w.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// RunOnce claims what is due now and delivers it, returning when every
// attempt has ended (for tests and the command line).
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	w.init()
	jobs, err := w.Store.ClaimDeliveries(ctx, w.Owner, w.Now(), w.Lease, w.Concurrency, w.PerEndpoint)
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() { w.deliver(ctx, j) })
	}
	wg.Wait()
	return len(jobs), nil
}

// Body is what a delivery posts: Standard Webhooks' payload structure.
func Body(e assistant.WebhookEvent) []byte {
	b, _ := json.Marshal(struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}{e.ID, e.Type, e.At.UTC().Format(time.RFC3339Nano), e.Data})
	return b
}

// deliver makes one attempt and records its result.
func (w *Worker) deliver(ctx context.Context, j assistant.DeliveryJob) {
	start := w.Now()
	status, err := w.post(ctx, j, start)
	end := w.Now()
	r := assistant.DeliveryResult{Status: status, ResponseTime: end.Sub(start), At: end}
	if err == nil {
		r.Delivered = true
	} else {
		r.Error = truncate(err.Error())
		r.NextAttemptAt = w.Backoff.Next(j.Delivery.Attempts, j.Event.At, end, w.Rand())
	}
	if _, ferr := w.Store.FinishDelivery(ctx, j.Delivery.ID, w.Owner, r); ferr != nil {
		// The lease runs out and the delivery is attempted again.
		w.Logger.Warn("webhook deliveries: recording an attempt failed", "delivery", j.Delivery.ID, "err", ferr)
	}
	if d := r.NextAttemptAt.Sub(end); err != nil && d > 0 && d < w.Poll {
		// A retry due before the next poll: claim then.
		time.AfterFunc(d, w.Wake)
	}
	if err != nil {
		w.Logger.Info("webhook delivery failed", "delivery", j.Delivery.ID, "endpoint", j.Endpoint.ID, "event", j.Event.ID,
			"attempt", j.Delivery.Attempts, "status", status, "err", r.Error, "gave_up", r.NextAttemptAt.IsZero())
	}
}

// post sends the event to the endpoint; a nil error means a 2xx answer.
func (w *Worker) post(ctx context.Context, j assistant.DeliveryJob, now time.Time) (int, error) {
	secret, err := w.Sealer.Open(j.Endpoint.ID, j.Endpoint.Secret)
	if err != nil {
		return 0, err
	}
	key, err := DecodeSecret(secret)
	if err != nil {
		return 0, err
	}
	body := Body(j.Event)
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.Endpoint.URL, bytes.NewReader(body))
	if err != nil {
		return 0, errors.New("the endpoint's URL is not valid")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", w.UserAgent)
	req.Header.Set(HeaderID, j.Event.ID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(HeaderSignature, Sign(key, j.Event.ID, now, body))
	resp, err := w.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold a token
		}
		return 0, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBytes))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return resp.StatusCode, nil
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return resp.StatusCode, fmt.Errorf("HTTP %d: redirects are not followed", resp.StatusCode)
	}
	return resp.StatusCode, fmt.Errorf("HTTP %d", resp.StatusCode)
}

func truncate(s string) string {
	if len(s) <= maxErrorLength {
		return s
	}
	return s[:maxErrorLength] + "…"
}

// NewClient returns the HTTP client of deliveries: every connection
// checked by the guard at connect time, no proxy from the environment,
// redirects never followed, bounded timeouts. tlsConfig may be nil.
func NewClient(g Guard, tlsConfig *tls.Config) *http.Client {
	d := g.Dialer()
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            d.DialContext,
			TLSClientConfig:        tlsConfig,
			TLSHandshakeTimeout:    5 * time.Second,
			ResponseHeaderTimeout:  RequestTimeout,
			MaxIdleConnsPerHost:    4,
			IdleConnTimeout:        30 * time.Second,
			MaxResponseHeaderBytes: 16 << 10,
			DisableCompression:     true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       RequestTimeout,
	}
}
