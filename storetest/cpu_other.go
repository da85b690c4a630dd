//go:build !unix

package storetest

import "time"

// ProcessCPU is 0 where the process's CPU time is not read: Hammer then
// reports none.
func ProcessCPU() time.Duration { return 0 }
