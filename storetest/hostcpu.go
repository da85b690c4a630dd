package storetest

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// HostCPU is the CPU time the whole machine has spent busy (user, nice,
// system, interrupts) since it booted, from Linux's /proc/stat, or 0 where
// that cannot be read. Across a benchmark on an otherwise idle machine,
// its growth is what the calls cost every process together: custody's,
// and a database server's it talks to.
func HostCPU() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 8 || string(f[0]) != "cpu" {
		return 0
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7} { // user nice system irq softirq
		n, err := strconv.ParseInt(string(f[i]), 10, 64)
		if err != nil {
			return 0
		}
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / userHZ)
}

// userHZ is the unit of /proc/stat's times, USER_HZ, 100 on every Linux
// architecture Go runs on.
const userHZ = 100
