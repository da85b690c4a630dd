//go:build race

package sqlite

// raceEnabled: the race detector slows the SQLite driver (C translated
// to Go, every memory access instrumented) by about 60 times.
const raceEnabled = true
