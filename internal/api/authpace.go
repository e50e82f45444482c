package api

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// Past the limit on failed authentication (AuthFailuresPerMinute), an
// address is slowed, not shut out: a valid key is never refused because
// other keys failed from the same address (a worker still using a revoked
// key behind the same NAT as a freshly rotated one). Instead:
//
//   - a key already verified by this instance is served from memory;
//   - a key that failed in the last minute (the same key again: the
//     revoked one a worker keeps sending) is refused from memory, 429;
//   - any other key waits for the address's turn, one verification at a
//     time per address on this instance, and a key that fails keeps the
//     turn for authPenalty more before its 429 leaves. A guesser behind
//     one address gets about one new guess a second per instance; a valid
//     key waits at most behind the guesses queued before it, then is
//     served.

// authPenalty is how long a failed verification past the limit holds its
// address's turn.
const authPenalty = time.Second

// maxFailedKeys bounds the memory of keys that failed recently.
const maxFailedKeys = 10_000

// errPastLimit refuses a key presented past the limit without a verdict on
// the key itself; authenticate answers it with 429.
var errPastLimit = assistant.Errorf(assistant.EUnauthorized, "The API key is not valid.")

// authPacer holds the turns and the memory of failed keys of the addresses
// past the limit, for one handler.
type authPacer struct {
	now     func() time.Time
	penalty time.Duration

	mu     sync.Mutex
	turns  map[string]*addressTurn // by client key, while a request holds or waits for it
	failed map[[32]byte]time.Time  // SHA-256 of a key -> when it failed
}

type addressTurn struct {
	slot    chan struct{} // holds one token while a verification runs
	waiting int           // requests holding or waiting for the turn
}

func newAuthPacer(now func() time.Time, penalty time.Duration) *authPacer {
	return &authPacer{now: now, penalty: penalty, turns: map[string]*addressTurn{}, failed: map[[32]byte]time.Time{}}
}

// verify decides on a key presented by client past the limit (see the
// comment at the top of the file).
func (p *authPacer) verify(ctx context.Context, keys keyVerifier, client, plaintext string) (assistant.APIKey, error) {
	if key, ok := keys.VerifyCached(plaintext); ok {
		return key, nil
	}
	fingerprint := sha256.Sum256([]byte(plaintext))
	if p.failedRecently(fingerprint) {
		return assistant.APIKey{}, errPastLimit
	}
	release, err := p.turn(ctx, client)
	if err != nil {
		return assistant.APIKey{}, errPastLimit
	}
	key, err := keys.Verify(ctx, plaintext)
	failed := assistant.ErrorCode(err) == assistant.EUnauthorized
	if failed {
		p.rememberFailed(fingerprint)
	}
	release(ctx, failed)
	return key, err
}

// keyVerifier is what the pacer needs of access.Verifier.
type keyVerifier interface {
	Verify(ctx context.Context, plaintext string) (assistant.APIKey, error)
	VerifyCached(plaintext string) (assistant.APIKey, bool)
}

// turn waits for client's turn; release gives it back, after the penalty
// when the verification failed.
func (p *authPacer) turn(ctx context.Context, client string) (release func(ctx context.Context, failed bool), err error) {
	p.mu.Lock()
	t := p.turns[client]
	if t == nil {
		t = &addressTurn{slot: make(chan struct{}, 1)}
		p.turns[client] = t
	}
	t.waiting++
	p.mu.Unlock()
	leave := func() {
		p.mu.Lock()
		if t.waiting--; t.waiting == 0 {
			delete(p.turns, client)
		}
		p.mu.Unlock()
	}
	select {
	case t.slot <- struct{}{}:
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
	return func(ctx context.Context, failed bool) {
		if failed && p.penalty > 0 {
			timer := time.NewTimer(p.penalty)
			select {
			case <-timer.C:
			case <-ctx.Done():
			}
			timer.Stop()
		}
		<-t.slot
		leave()
	}, nil
}

func (p *authPacer) failedRecently(fingerprint [32]byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.failed[fingerprint]
	return ok && p.now().Sub(at) < time.Minute
}

// rememberFailed remembers a failed key for a minute; when the memory is
// full, expired entries go, and if none has expired it starts again.
func (p *authPacer) rememberFailed(fingerprint [32]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if len(p.failed) >= maxFailedKeys {
		for f, at := range p.failed {
			if now.Sub(at) >= time.Minute {
				delete(p.failed, f)
			}
		}
		if len(p.failed) >= maxFailedKeys {
			clear(p.failed)
		}
	}
	p.failed[fingerprint] = now
}
