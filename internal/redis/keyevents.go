package redis

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/constraintlab/assistant/internal/assistant"
)

var _ assistant.KeyEvents = (*KeyEvents)(nil)

// KeyEvents carries key-change notices between instances on one Redis
// publish/subscribe channel (the prefix, then "keys:changed"); a notice's
// payload is the key ids joined by commas. A subscriber subscribes again on
// its own after Redis comes back; notices published meanwhile are lost,
// which the verifier's polling covers.
type KeyEvents struct {
	c       *Client
	channel string
	// HealthCheck is how often an idle subscription pings Redis to find a
	// dead connection, how long the pong may take, and the pause before
	// subscribing again on a new connection.
	HealthCheck time.Duration
}

// NewKeyEvents returns the key-change channel of c's deployment.
func NewKeyEvents(c *Client) *KeyEvents {
	return &KeyEvents{c: c, channel: c.prefix + "keys:changed", HealthCheck: time.Second}
}

// PublishKeyChanges implements assistant.KeyEvents. It fails at once while
// the breaker is open.
func (e *KeyEvents) PublishKeyChanges(ctx context.Context, ids ...string) error {
	_, err := call(e.c, ctx, "publish", func(ctx context.Context) (int64, error) {
		return e.c.rdb.Publish(ctx, e.channel, strings.Join(ids, ",")).Result()
	})
	return err
}

// SubscribeKeyChanges implements assistant.KeyEvents. It listens until ctx
// ends: when the connection fails (Redis restarted, stopped or hung), it
// subscribes again on a fresh connection, HealthCheck apart, for as long
// as it takes.
func (e *KeyEvents) SubscribeKeyChanges(ctx context.Context, fn func(ids []string)) {
	for {
		e.listen(ctx, fn)
		select {
		case <-ctx.Done():
			return
		case <-time.After(e.HealthCheck):
		}
	}
}

// listen subscribes once and hands notices to fn until ctx ends or the
// connection fails. An idle connection is pinged every HealthCheck; one
// whose ping goes unanswered for another HealthCheck counts as failed. The
// reconnection is ours rather than the client's, so that a connection that
// went bad in any way is replaced by a new one, never reused.
func (e *KeyEvents) listen(ctx context.Context, fn func(ids []string)) {
	ps := e.c.rdb.Subscribe(ctx, e.channel)
	// A read blocks whatever the context; closing the subscription ends it.
	stop := context.AfterFunc(ctx, func() { ps.Close() })
	defer func() {
		stop()
		ps.Close()
	}()
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, e.HealthCheck)
		if err != nil {
			var nerr net.Error
			if ctx.Err() != nil || !errors.As(err, &nerr) || !nerr.Timeout() || pinged {
				return
			}
			if ps.Ping(ctx) != nil {
				return
			}
			pinged = true
			continue
		}
		pinged = false
		m, ok := msg.(*goredis.Message)
		if !ok {
			continue // a subscription confirmation or a pong
		}
		var ids []string
		for _, id := range strings.Split(m.Payload, ",") {
			if id != "" {
				ids = append(ids, id)
			}
		}
		if len(ids) > 0 {
			fn(ids)
		}
	}
}
