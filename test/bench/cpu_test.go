package bench

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// benchProcess names the benchmark's own process, which runs the clients, in a cpuSample.
const benchProcess = "clients"

// cpuSample is the CPU time (user and system) each process of the stack has used so far,
// and the benchmark's own process as benchProcess.
type cpuSample map[string]time.Duration

// sampleCPU reads the CPU time of the stack's processes and of this one.
func sampleCPU() cpuSample {
	pids := stack.PIDs()
	pids[benchProcess] = os.Getpid()
	s := cpuSample{}
	for name, pid := range pids {
		if t, err := processCPU(pid); err == nil {
			s[name] = t
		}
	}
	return s
}

// processCPU is utime+stime of a process, all its threads, from /proc/<pid>/stat.
func processCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(data))
}

// parseStatCPU reads utime and stime, the 14th and 15th fields of a /proc/<pid>/stat line.
// The second field, the command, is in parentheses and may hold spaces, so the fields are
// counted from its closing parenthesis.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command in %q", stat)
	}
	fields := strings.Fields(stat[i+1:]) // fields[0] is the 3rd field, the state
	if len(fields) < 13 {
		return 0, fmt.Errorf("too few fields in %q", stat)
	}
	var total time.Duration
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("CPU time %q: %w", f, err)
		}
		total += time.Duration(n) * clockTick
	}
	return total, nil
}

// cpuPerCall is the CPU each process spent between two samples per call, in ms, with the
// processes that spent less than 1% of the total left out, and the total under "total".
func cpuPerCall(before, after cpuSample, calls int) map[string]float64 {
	per := map[string]float64{}
	if calls == 0 {
		return per
	}
	var total time.Duration
	for name, t := range after {
		if d := t - before[name]; d > 0 {
			total += d
		}
	}
	for name, t := range after {
		if d := t - before[name]; d > 0 && d*100 >= total {
			per[name] = ms(d) / float64(calls)
		}
	}
	per["total"] = ms(total) / float64(calls)
	return per
}

// formatCPU lists cpuPerCall's figures, the largest first, the total last.
func formatCPU(per map[string]float64) string {
	names := slices.Collect(maps.Keys(per))
	slices.SortFunc(names, func(a, b string) int {
		switch {
		case a == "total":
			return 1
		case b == "total":
			return -1
		case per[a] != per[b]:
			if per[a] > per[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %.2f", n, per[n])
	}
	return strings.Join(parts, ", ")
}
