package postgres_test

import (
	"log/slog"
	"net/http"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/storetest"
)

func TestContractHTTP(t *testing.T) {
	storetest.RunHTTP(t, func(t *testing.T) custody.Store { return open(t) }, func(svc *custody.Service) http.Handler {
		return httpapi.New(svc, httpapi.Options{Logger: slog.New(slog.DiscardHandler)}).Handler()
	})
}
