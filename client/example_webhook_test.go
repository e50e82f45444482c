package client_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/constraintlab/assistant/client"
)

// A receiver verifies each delivery with the endpoint's secret before
// trusting it, over the body exactly as received.
func ExampleVerifyWebhook() {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"id":"msg_1","type":"key.revoked","timestamp":"2026-11-26T15:04:05Z","data":{"key":{"id":"Ab3dEf6hIj9k"}}}`)
	now := time.Unix(1_795_000_000, 0)

	// What the service sends (computed here to make the example whole).
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "msg_1.%d.%s", now.Unix(), body)
	h := http.Header{}
	h.Set("webhook-id", "msg_1")
	h.Set("webhook-timestamp", fmt.Sprint(now.Unix()))
	h.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))

	ev, err := client.VerifyWebhook(secret, h, body, now)
	fmt.Println(ev.Type, err)
	_, err = client.VerifyWebhook(secret, h, append(body, ' '), now)
	fmt.Println(err != nil)
	// Output:
	// key.revoked <nil>
	// true
}
