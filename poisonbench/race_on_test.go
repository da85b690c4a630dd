//go:build race

package poisonbench

// raceEnabled: the race detector slows the SQLite driver by an order of
// magnitude, so the matrix tests run fewer delays and skip the golden file.
const raceEnabled = true
