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

// profile is a CPU profile of the kcp-setups server or of kube-apiserver being taken.
type profile struct {
	// name says whose profile of which run it is, as in mint-direct-server.
	name string
	done chan struct{}
	data string
	err  error
}

// profiled is whom startProfile profiles.
type profiled int

const (
	profileServer profiled = iota
	profileKubeAPIServer
)

// startProfile asks the server or kube-apiserver for a CPU profile of the next d, through
// its /debug/pprof (both serve it while profiling is enabled, their default), as the admin.
func startProfile(ctx context.Context, name string, who profiled, d time.Duration) *profile {
	p := &profile{name: name, done: make(chan struct{})}
	path := "/debug/pprof/profile?seconds=" + strconv.Itoa(int(d.Seconds()))
	go func() {
		defer close(p.done)
		if who == profileServer {
			p.data, p.err = stack.ServerGet(ctx, path)
			return
		}
		var raw []byte
		raw, p.err = stack.Kube.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", strconv.Itoa(int(d.Seconds()))).Timeout(d + time.Minute).DoRaw(ctx)
		p.data = string(raw)
	}()
	return p
}

// finish waits for the profile, saves it as _output/bench/<name>.cpu.pprof and prints its
// top entries.
func (p *profile) finish(b *testing.B, e *entry) {
	<-p.done
	if p.err != nil {
		b.Errorf("profiling %s: %v", p.name, p.err)
		return
	}
	path, err := filepath.Abs(filepath.Join(resultsDir(), p.name+".cpu.pprof"))
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
	fmt.Printf("%s: the CPU profile %s, in %s:\n%s", e.Benchmark, p.name, path, out)
}
