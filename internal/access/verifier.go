package access

import (
	"context"
	"crypto/subtle"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// KeyLookup is what the verifier needs of the store.
type KeyLookup interface {
	KeyByID(ctx context.Context, id string) (assistant.APIKey, error)
	RevokedSince(ctx context.Context, since time.Time) ([]string, error)
	TouchKeys(ctx context.Context, lastUsed map[string]time.Time) error
}

// Verifier checks presented API keys. It caches key rows by id so a
// verification needs no database query, and keeps D18 across processes in
// two ways: with Events set, every instance hears at once of a key changed
// anywhere (Announce publishes, Run subscribes), and in any case it polls
// the store for recent revocations every PollInterval, so a revocation
// whose notice was lost (or made with no Events configured) is evicted
// within that time. It records last-used times in memory and writes them
// in one batch every FlushInterval, never once per request.
type Verifier struct {
	store  KeyLookup
	now    func() time.Time
	logger *slog.Logger

	// Events, optional, carries key-change notices between instances.
	Events assistant.KeyEvents

	// CacheTTL bounds how long a cached row is trusted without a fresh
	// read, as a backstop to polling.
	CacheTTL      time.Duration
	PollInterval  time.Duration
	FlushInterval time.Duration
	// NegativeTTL is how long an unknown key id is remembered as unknown,
	// so a well-formed key that does not exist costs one database read per
	// NegativeTTL, not one per request. At most MaxNegative ids are
	// remembered. Only "not found" is cached: a revoked or expired key is
	// a cached row like any other, and Forget (called when this process
	// creates or revokes a key) drops both kinds of entry.
	NegativeTTL time.Duration
	MaxNegative int

	mu       sync.Mutex
	cache    map[string]cachedKey
	negative map[string]time.Time // key id -> when it was found unknown
	lastUsed map[string]time.Time
}

type cachedKey struct {
	key     assistant.APIKey
	fetched time.Time
}

// NewVerifier returns a verifier with the default intervals: poll every
// 250 ms (D18 asks for one second), flush last-used every 10 s, re-read a
// cached row after 5 minutes, remember up to 10,000 unknown key ids for 5
// seconds.
func NewVerifier(store KeyLookup, now func() time.Time, logger *slog.Logger) *Verifier {
	return &Verifier{
		store: store, now: now, logger: logger,
		CacheTTL: 5 * time.Minute, PollInterval: 250 * time.Millisecond, FlushInterval: 10 * time.Second,
		NegativeTTL: 5 * time.Second, MaxNegative: 10_000,
		cache: map[string]cachedKey{}, negative: map[string]time.Time{}, lastUsed: map[string]time.Time{},
	}
}

var errInvalidKey = assistant.Errorf(assistant.EUnauthorized, "The API key is not valid.")

// Verify returns the key a plaintext belongs to, or an EUnauthorized error
// when it is malformed, unknown, revoked or expired. A malformed key or a
// wrong checksum is rejected before any lookup.
func (v *Verifier) Verify(ctx context.Context, plaintext string) (assistant.APIKey, error) {
	id, err := ParseKey(plaintext)
	if err != nil {
		return assistant.APIKey{}, err
	}
	now := v.now()
	key, err := v.lookup(ctx, id, now)
	if err != nil {
		return assistant.APIKey{}, err
	}
	hash := HashKey(plaintext)
	if subtle.ConstantTimeCompare(hash[:], key.Hash[:]) != 1 {
		return assistant.APIKey{}, errInvalidKey
	}
	switch key.Status(now) {
	case "revoked":
		return assistant.APIKey{}, assistant.Errorf(assistant.EUnauthorized, "The API key has been revoked.")
	case "expired":
		return assistant.APIKey{}, assistant.Errorf(assistant.EUnauthorized, "The API key has expired.")
	}
	v.mu.Lock()
	v.lastUsed[id] = now
	v.mu.Unlock()
	return key, nil
}

// VerifyCached is Verify with no store access: ok is true only for a valid
// key whose row is in the cache (and fresh). The API uses it for clients
// past the limit on failed authentication.
func (v *Verifier) VerifyCached(plaintext string) (key assistant.APIKey, ok bool) {
	id, err := ParseKey(plaintext)
	if err != nil {
		return assistant.APIKey{}, false
	}
	now := v.now()
	v.mu.Lock()
	c, cached := v.cache[id]
	v.mu.Unlock()
	if !cached || now.Sub(c.fetched) >= v.CacheTTL {
		return assistant.APIKey{}, false
	}
	hash := HashKey(plaintext)
	if subtle.ConstantTimeCompare(hash[:], c.key.Hash[:]) != 1 || c.key.Status(now) != "active" {
		return assistant.APIKey{}, false
	}
	v.mu.Lock()
	v.lastUsed[id] = now
	v.mu.Unlock()
	return c.key, true
}

func (v *Verifier) lookup(ctx context.Context, id string, now time.Time) (assistant.APIKey, error) {
	v.mu.Lock()
	c, ok := v.cache[id]
	unknownAt, unknown := v.negative[id]
	v.mu.Unlock()
	if ok && now.Sub(c.fetched) < v.CacheTTL {
		return c.key, nil
	}
	if unknown && now.Sub(unknownAt) < v.NegativeTTL && !now.Before(unknownAt) {
		return assistant.APIKey{}, errInvalidKey
	}
	key, err := v.store.KeyByID(ctx, id)
	if assistant.ErrorCode(err) == assistant.ENotFound {
		v.rememberUnknown(id, now)
		return assistant.APIKey{}, errInvalidKey
	}
	if err != nil {
		return assistant.APIKey{}, err
	}
	v.mu.Lock()
	v.cache[id] = cachedKey{key: key, fetched: now}
	v.mu.Unlock()
	return key, nil
}

// rememberUnknown caches id as unknown. When the cache is full, expired
// entries are swept; if it is still full, id is not remembered (the per-IP
// limit on failed authentication bounds what that costs).
func (v *Verifier) rememberUnknown(id string, now time.Time) {
	if v.NegativeTTL <= 0 || v.MaxNegative <= 0 {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.negative) >= v.MaxNegative {
		for k, at := range v.negative {
			if now.Sub(at) >= v.NegativeTTL || now.Before(at) {
				delete(v.negative, k)
			}
		}
		if len(v.negative) >= v.MaxNegative {
			return
		}
	}
	v.negative[id] = now
}

// Forget evicts keys from the cache, known or remembered as unknown: right
// after this process revoked them, or created them.
func (v *Verifier) Forget(ids ...string) {
	v.mu.Lock()
	for _, id := range ids {
		delete(v.cache, id)
		delete(v.negative, id)
	}
	v.mu.Unlock()
}

// Announce evicts keys that this process changed (revoked, or whose expiry
// it moved) from its cache and, with Events set, tells every other
// instance to do the same. A notice that cannot be sent is logged: the
// other instances still find the revocation by polling.
func (v *Verifier) Announce(ctx context.Context, ids ...string) {
	v.Forget(ids...)
	if v.Events == nil || len(ids) == 0 {
		return
	}
	if err := v.Events.PublishKeyChanges(ctx, ids...); err != nil {
		v.logger.WarnContext(ctx, "announcing a key change to the other instances failed; they will find it by polling",
			"err", err, "keys", ids)
	}
}

// Run polls for revocations, listens to Events (when set) and flushes
// last-used times until ctx ends, then flushes once more.
func (v *Verifier) Run(ctx context.Context) {
	if v.Events != nil {
		listening := make(chan struct{})
		go func() {
			defer close(listening)
			v.Events.SubscribeKeyChanges(ctx, func(ids []string) { v.Forget(ids...) })
		}()
		defer func() { <-listening }()
	}
	poll := time.NewTicker(v.PollInterval)
	flush := time.NewTicker(v.FlushInterval)
	defer poll.Stop()
	defer flush.Stop()
	since := v.now().Add(-time.Minute)
	for {
		select {
		case <-ctx.Done():
			v.Flush(context.WithoutCancel(ctx))
			return
		case <-poll.C:
			next := v.now()
			if err := v.pollRevocations(ctx, since); err != nil {
				if !errors.Is(err, context.Canceled) {
					v.logger.Warn("polling key revocations failed", "err", err)
				}
				continue
			}
			// Overlap the windows so clock skew between processes
			// cannot hide a revocation.
			since = next.Add(-5 * time.Second)
		case <-flush.C:
			v.Flush(ctx)
		}
	}
}

func (v *Verifier) pollRevocations(ctx context.Context, since time.Time) error {
	ids, err := v.store.RevokedSince(ctx, since)
	if err != nil {
		return err
	}
	v.Forget(ids...)
	return nil
}

// Flush writes the pending last-used times.
func (v *Verifier) Flush(ctx context.Context) {
	v.mu.Lock()
	pending := v.lastUsed
	v.lastUsed = map[string]time.Time{}
	v.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	if err := v.store.TouchKeys(ctx, pending); err != nil {
		v.logger.Warn("recording key last-used times failed", "err", err, "keys", len(pending))
	}
}
