//go:build !unix

package storetest

import "time"

// processCPU is 0 where the process's CPU time is not read: Hammer then
// reports none.
func processCPU() time.Duration { return 0 }
