// Package console is the review console: a few static pages, embedded in
// the binary, that a reviewer opens in a browser at /console/ to work the
// review queue, read a record's story and check the log's status.
//
// The pages use only the public HTTP API. The reviewer's bearer token is
// kept in the tab's session storage and sent as an Authorization header;
// it never goes into a cookie or a URL, so the console can do nothing the
// token cannot. Every answer carries a Content-Security-Policy that allows
// only the console's own script and style files (no inline script) and
// forbids framing.
//
// Webhook tells a reviewer's tools when candidates are held, so the queue
// is not a list nobody reads (custody serve --review-webhook).
package console

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed assets
var assets embed.FS

// Prefix is the path the console is served under; mount Handler there
// (httpapi.Server.MountPublic(console.Prefix, console.Handler())).
const Prefix = "/console/"

// CSP is the Content-Security-Policy of every console answer.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the console's files under Prefix. It answers GET and HEAD
// only, and sets the security headers on every answer.
func Handler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic("console: embedded assets missing: " + err.Error())
	}
	files := http.StripPrefix(Prefix, http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			h.Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusMethodNotAllowed)
			w.Write([]byte(`{"error":{"code":"method_not_allowed","message":"the console's pages answer GET and HEAD only"}}`))
			return
		}
		name := strings.TrimPrefix(r.URL.Path, Prefix)
		if name == "" {
			name = "index.html"
		}
		if st, err := fs.Stat(sub, name); err != nil || st.IsDir() { // no directory listings
			h.Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":{"code":"not_found","message":"the console has no such page; open /console/"}}`))
			return
		}
		files.ServeHTTP(w, r)
	})
}
