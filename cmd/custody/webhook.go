package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"sync"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/console"
)

// reviewWebhookSecretEnv names the environment variable with the secret
// that signs the review webhook's bodies.
const reviewWebhookSecretEnv = "CUSTODY_REVIEW_WEBHOOK_SECRET"

// reviewWebhook checks serve's --review-webhook and its secret; nil when
// the flag is not given.
func reviewWebhook(rawURL string, logger *slog.Logger) (*console.Webhook, error) {
	if rawURL == "" {
		return nil, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError{fmt.Sprintf("--review-webhook %q is not an http or https URL", rawURL)}
	}
	secret := os.Getenv(reviewWebhookSecretEnv)
	if secret == "" {
		return nil, usageError{"--review-webhook needs a secret to sign its bodies: set $" + reviewWebhookSecretEnv}
	}
	return console.NewWebhook(rawURL, []byte(secret), console.WebhookOptions{Logger: logger}), nil
}

// startReviewWebhook subscribes hook (if any) to svc's events and delivers
// them in the background until ctx ends.
func startReviewWebhook(ctx context.Context, svc *custody.Service, hook *console.Webhook, wg *sync.WaitGroup) {
	if hook == nil {
		return
	}
	svc.OnEvent(hook.Observe)
	wg.Add(1)
	go func() { defer wg.Done(); hook.Run(ctx) }()
}
