package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// profile is a CPU profile of the kcp-setups server being taken.
type profile struct {
	done chan struct{}
	data string
	err  error
}

// startProfile asks the server for a CPU profile of the next d, through its /debug/pprof
// (genericapiserver serves it while profiling is enabled, its default), as the admin.
func startProfile(ctx context.Context, d time.Duration) *profile {
	p := &profile{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.data, p.err = stack.ServerGet(ctx, "/debug/pprof/profile?seconds="+strconv.Itoa(int(d.Seconds())))
	}()
	return p
}

// finish waits for the profile, saves it as _output/bench/<benchmark>.cpu.pprof and prints
// its top entries.
func (p *profile) finish(b *testing.B, e *entry) {
	<-p.done
	if p.err != nil {
		b.Errorf("profiling the server: %v", p.err)
		return
	}
	path, err := filepath.Abs(filepath.Join(resultsDir(), e.Benchmark+".cpu.pprof"))
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err == nil {
		err = os.WriteFile(path, []byte(p.data), 0o644)
	}
	if err != nil {
		b.Errorf("saving the profile: %v", err)
		return
	}
	goTool := os.Getenv("GO")
	if goTool == "" {
		goTool = "go"
	}
	out, err := exec.Command(goTool, "tool", "pprof", "-top", "-nodecount=15", path).CombinedOutput()
	if err != nil {
		b.Errorf("go tool pprof: %v: %s", err, out)
		return
	}
	fmt.Printf("%s: the server's CPU profile, in %s:\n%s", e.Benchmark, path, out)
}
