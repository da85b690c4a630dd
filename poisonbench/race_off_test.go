//go:build !race

package poisonbench

const raceEnabled = false
