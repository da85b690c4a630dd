//go:build unix

package storetest

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time the process has taken, user and system.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
