package main

import (
	"errors"
	"fmt"
	"net/url"
	"syscall"
)

// connectionHint says what to do when a client verb found no server at its
// URL, or "" for any other error.
func connectionHint(err error) string {
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return ""
	}
	where := "the server"
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			where = u.Scheme + "://" + u.Host
		}
	}
	return fmt.Sprintf("No custody server answers at %s. Start one with 'custody serve' (in another terminal), "+
		"or point CUSTODY_URL (or --url) at the one you run (e.g. CUSTODY_URL=http://127.0.0.1:8765).", where)
}
