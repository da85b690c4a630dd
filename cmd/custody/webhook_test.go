package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// serve --review-webhook needs an http(s) URL and a secret; with both it
// starts.
func TestServeReviewWebhookFlag(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	t.Setenv(reviewWebhookSecretEnv, "")
	if _, err := serve(t, "--db", db, "--review-webhook", "http://127.0.0.1:9/hook"); err == nil || !strings.Contains(err.Error(), "$"+reviewWebhookSecretEnv) {
		t.Fatalf("without a secret: err = %v, want one naming $%s", err, reviewWebhookSecretEnv)
	}
	t.Setenv(reviewWebhookSecretEnv, "s3cret")
	if _, err := serve(t, "--db", db, "--review-webhook", "ftp://example/hook"); err == nil || !strings.Contains(err.Error(), "not an http or https URL") {
		t.Fatalf("with an ftp URL: err = %v", err)
	}
	if out, err := serve(t, "--db", db, "--review-webhook", "http://127.0.0.1:9/hook"); err != nil || !strings.Contains(out, "custody is serving on") {
		t.Fatalf("with a URL and a secret: err = %v, printed %q", err, out)
	}
}
