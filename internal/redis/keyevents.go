package redis

import (
	"context"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/constraintlab/assistant/internal/assistant"
)

var _ assistant.KeyEvents = (*KeyEvents)(nil)

// KeyEvents carries key-change notices between instances on one Redis
// publish/subscribe channel (the prefix, then "keys:changed"); a notice's
// payload is the key ids joined by commas. A subscriber reconnects on its
// own after Redis comes back; notices published meanwhile are lost, which
// the verifier's polling covers.
type KeyEvents struct {
	c       *Client
	channel string
	// HealthCheck is how often an idle subscription pings Redis to find a
	// dead connection (it then reconnects).
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

// SubscribeKeyChanges implements assistant.KeyEvents.
func (e *KeyEvents) SubscribeKeyChanges(ctx context.Context, fn func(ids []string)) {
	ps := e.c.rdb.Subscribe(ctx, e.channel)
	defer ps.Close()
	msgs := ps.Channel(goredis.WithChannelHealthCheckInterval(e.HealthCheck), goredis.WithChannelPingTimeout(e.HealthCheck))
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-msgs:
			if !ok {
				return
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
}
