// Package independent is a verifier of custody's log written from
// docs/log-format.md alone: its tests build and run the custody binary
// and a C2SP witness, write through plain HTTP and JSON, and check
// everything the server publishes with libraries of the field
// (golang.org/x/mod/sumdb, filippo.io/torchwood, transparency-dev/formats),
// importing none of custody's packages.
package independent
