package httpapi

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tiles"
)

// TilesPrefix is where each tenant's log is served as C2SP tlog-tiles,
// under the ID it is published under (custody.LogIDs), never under the
// tenant's name: /log/{id}/checkpoint, /log/{id}/tile/<L>/<N>[.p/<W>] and
// /log/{id}/tile/entries/<N>[.p/<W>] (docs/log-format.md).
const TilesPrefix = "/log/"

// handleTiles registers the tlog-tiles routes. The checkpoint and the hash
// tiles hold only hashes and are served without a token, within the
// client address's log-read budget; an entry bundle holds the leaves
// themselves, which name owners, namespaces, keys and audiences, so it is
// served only to an admin or auditor principal of the tenant (the callers
// that read every entry of their tenant in GET /v1/log/entries), within
// the principal's log-read budget. An ID no tenant's log has, and a
// tenant's log that has no checkpoint yet, answer alike (404; 403 for a
// bundle to a caller who is not the log's tenant's admin or auditor).
// They are not in the OpenAPI document: their format is C2SP's.
func (s *Server) handleTiles() {
	for _, p := range []struct {
		pattern string
		h       http.Handler
	}{
		{"GET " + TilesPrefix + "{log}/checkpoint", s.addressLimited(http.HandlerFunc(s.tileCheckpoint))},
		{"GET " + TilesPrefix + "{log}/latest-checkpoint", s.addressLimited(http.HandlerFunc(s.tileCheckpoint))},
		{"GET " + TilesPrefix + "{log}/tile/{path...}", s.addressLimited(http.HandlerFunc(s.tile))},
		{"GET " + TilesPrefix + "{log}/tile/entries/{path...}", s.authenticated(http.HandlerFunc(s.tile), s.readLimiter, false)},
	} {
		s.mux.Handle(p.pattern, s.instrument(p.pattern, s.withTimeout(p.h)))
	}
}

// errNoLog is the answer for an ID no tenant's log is published under.
var errNoLog = fmt.Errorf("%w: no log is published under this ID", tiles.ErrNotFound)

// tileTenant is the tenant whose log r's path names by its ID.
func (s *Server) tileTenant(r *http.Request) (string, error) {
	t, ok, err := s.logIDs.Tenant(r.Context(), r.PathValue("log"))
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errNoLog
	}
	return t, nil
}

func (s *Server) tileCheckpoint(w http.ResponseWriter, r *http.Request) {
	tenant, err := s.tileTenant(r)
	if err != nil {
		s.tileError(w, r, err)
		return
	}
	current := s.currentCheckpoint
	if strings.HasSuffix(r.URL.Path, "/latest-checkpoint") {
		current = s.latestCheckpoint
	}
	note, err := current(r.Context(), tenant)
	if err != nil {
		s.tileError(w, r, err)
		return
	}
	writeTile(w, note, "text/plain; charset=utf-8", tiles.CacheCheckpoint)
}

func (s *Server) tile(w http.ResponseWriter, r *http.Request) {
	t, err := tiles.ParsePath(r.URL.Path[len(TilesPrefix+r.PathValue("log")+"/"):])
	if err != nil {
		s.tileError(w, r, err)
		return
	}
	tenant, err := s.tileTenant(r)
	if err != nil && !errors.Is(err, errNoLog) {
		s.tileError(w, r, err)
		return
	}
	if t.L < 0 {
		p := PrincipalFrom(r.Context())
		if err != nil || p == nil || p.Tenant != tenant || !p.HasAny(custody.RoleAdmin, custody.RoleAuditor) {
			writeJSONError(w, http.StatusForbidden, "forbidden",
				"entry bundles are served to the admin and auditor principals of the log's tenant only; others read the entries they may see with GET /v1/log/entries", "")
			return
		}
	}
	if err != nil {
		s.tileError(w, r, err)
		return
	}
	data, err := tiles.Read(r.Context(), s.tileLog(), tenant, t)
	if err != nil {
		s.tileError(w, r, err)
		return
	}
	if t.L < 0 {
		// Entry bundles compress (C2SP tlog-tiles: SHOULD, at the HTTP
		// layer); hash tiles are random bytes and do not.
		w.Header().Set("Vary", "Accept-Encoding")
		if acceptsGzip(r.Header.Values("Accept-Encoding")) {
			if data, err = gzipped(data); err != nil {
				s.tileError(w, r, err)
				return
			}
			w.Header().Set("Content-Encoding", "gzip")
		}
	}
	writeTile(w, data, "application/octet-stream", tiles.CacheControl(t))
}

// acceptsGzip reports whether an Accept-Encoding header accepts gzip: it
// names gzip (or *) without q=0.
func acceptsGzip(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			if coding != "gzip" && coding != "x-gzip" && coding != "*" {
				continue
			}
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				if k, val, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						q = f
					}
				}
			}
			if q > 0 {
				return true
			}
		}
	}
	return false
}

// gzipped is data compressed with gzip.
func gzipped(data []byte) ([]byte, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeTile(w http.ResponseWriter, data []byte, contentType, cache string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(data)))
	h.Set("Cache-Control", cache)
	w.WriteHeader(http.StatusOK)
	w.Write(data)
}

// tileError answers a tile request that failed. 404 and 400 are not
// cached for long: the tile may exist in a moment.
func (s *Server) tileError(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("Cache-Control", "no-store")
	switch {
	case errors.Is(err, tiles.ErrNotFound), errors.Is(err, custody.ErrNotFound):
		writeJSONError(w, http.StatusNotFound, "not_found", "this log has no such tile or checkpoint (yet)", "")
	case errors.Is(err, tiles.ErrBadPath):
		writeJSONError(w, http.StatusBadRequest, "invalid_input", err.Error(), "")
	default:
		s.writeError(w, r, route{}, err)
	}
}
