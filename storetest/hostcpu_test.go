package storetest

import (
	"runtime"
	"testing"
	"time"
)

func TestHostCPUGrowsWithWork(t *testing.T) {
	if runtime.GOOS != "linux" {
		if HostCPU() != 0 {
			t.Fatal("HostCPU reads /proc/stat only on Linux")
		}
		t.Skip("no /proc/stat")
	}
	before := HostCPU()
	if before <= 0 {
		t.Fatalf("HostCPU = %v on Linux", before)
	}
	// Spin until the machine's busy time has grown: /proc/stat counts in
	// hundredths of a second, so a few of them of work must show.
	for deadline := time.Now().Add(10 * time.Second); HostCPU() < before+30*time.Millisecond; {
		if time.Now().After(deadline) {
			t.Fatalf("HostCPU stayed at %v after 10 s of spinning", HostCPU())
		}
		x := 0
		for i := range 1_000_000 {
			x += i
		}
		_ = x
	}
}
