package client_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/constraintlab/assistant/client"
)

// TestVerifyWebhookVectors runs the Standard Webhooks test vectors the
// service's signer is held to (internal/webhook/testdata).
func TestVerifyWebhookVectors(t *testing.T) {
	b, err := os.ReadFile("../internal/webhook/testdata/standard-webhooks-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Sign []struct {
			Secret, ID, Payload, Signature string
			Timestamp                      int64
		}
		Verify []struct {
			Name, Secret, Drop, Signature, Payload string
			Signatures                             []string
			Offset                                 int64
			Valid                                  bool
		}
		Defaults struct {
			Secret, ID, Payload string
			Now                 int64
		}
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	// The published signature verifies at its own timestamp, and only then.
	for _, c := range v.Sign {
		h := http.Header{}
		h.Set("webhook-id", c.ID)
		h.Set("webhook-timestamp", fmt.Sprint(c.Timestamp))
		h.Set("webhook-signature", c.Signature)
		if _, err := client.VerifyWebhook(c.Secret, h, []byte(c.Payload), time.Unix(c.Timestamp, 0)); err != nil {
			t.Errorf("the published signature: %v", err)
		}
		h.Set("webhook-timestamp", fmt.Sprint(c.Timestamp+1))
		if _, err := client.VerifyWebhook(c.Secret, h, []byte(c.Payload), time.Unix(c.Timestamp, 0)); !errors.Is(err, client.ErrWebhookSignature) {
			t.Errorf("another timestamp verified: %v", err)
		}
	}
	d := v.Defaults
	key, _ := base64.StdEncoding.DecodeString(d.Secret)
	now := time.Unix(d.Now, 0)
	for _, c := range v.Verify {
		ts := d.Now + c.Offset
		mac := hmac.New(sha256.New, key)
		fmt.Fprintf(mac, "%s.%d.%s", d.ID, ts, d.Payload)
		valid := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
		h := http.Header{}
		h.Set("webhook-id", d.ID)
		h.Set("webhook-timestamp", fmt.Sprint(ts))
		h.Set("webhook-signature", valid)
		if c.Signature != "" {
			h.Set("webhook-signature", c.Signature)
		}
		if c.Signatures != nil {
			h.Set("webhook-signature", strings.ReplaceAll(strings.Join(c.Signatures, " "), "VALID", valid))
		}
		if c.Drop != "" {
			h.Del(c.Drop)
		}
		secret, payload := d.Secret, d.Payload
		if c.Secret != "" {
			secret = c.Secret
		}
		if c.Payload != "" {
			payload = c.Payload
		}
		_, err := client.VerifyWebhook(secret, h, []byte(payload), now)
		if (err == nil) != c.Valid {
			t.Errorf("%s: VerifyWebhook = %v, want valid=%v", c.Name, err, c.Valid)
		}
	}
}
