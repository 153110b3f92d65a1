package localstack

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopTimeout is how long a component gets to exit after SIGTERM before it is killed.
const stopTimeout = 20 * time.Second

// process is one component of the stack, running as a child process with its output in a
// log file.
type Process struct {
	name    string
	cmd     *exec.Cmd
	logFile string
	env     []string
	done    chan struct{}
	err     error
}

// startProcess starts bin with args, logging to dir/name.log.
func StartProcess(dir, name, bin string, args ...string) (*Process, error) {
	return StartProcessWithEnv(dir, name, bin, nil, args...)
}

// StartProcessWithEnv is StartProcess with env added to the process's environment, for what
// must not show on a command line (a secret).
func StartProcessWithEnv(dir, name, bin string, env []string, args ...string) (*Process, error) {
	logFile := filepath.Join(dir, name+".log")
	out, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	// A process group of its own, so that Ctrl-C in `make run` reaches the stack through
	// its orderly shutdown rather than all at once.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{name: name, cmd: cmd, logFile: logFile, env: env, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = out.Close()
		close(p.done)
	}()
	return p, nil
}

// rerun starts p's command again, with the same arguments and log file, as a restart of
// the component; p must have ended.
func (p *Process) Rerun() (*Process, error) {
	return StartProcessWithEnv(filepath.Dir(p.logFile), p.name, p.cmd.Path, p.env, p.cmd.Args[1:]...)
}

// exited reports whether the process has ended, with its error.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, fmt.Errorf("%s exited: %v; see %s, which ends:\n%s", p.name, p.err, p.logFile, p.Tail(8))
	default:
		return false, nil
	}
}

// stop sends SIGTERM, waits, and kills the process if it does not exit in time.
func (p *Process) Stop() {
	if done, _ := p.Exited(); done {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// kill ends the process at once, as a crash would.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// tail returns the last n lines of the process's log.
func (p *Process) Tail(n int) string {
	data, err := os.ReadFile(p.logFile)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// FreePort is a loopback port that nothing listens on, handed out once per process. It is
// taken from below the kernel's ephemeral range (net.ipv4.ip_local_port_range), never from
// it: a port the kernel handed out for a probe is free again the moment the probe closes, and
// any outgoing connection of any process may take it as its source port before the component
// it was meant for binds it, which then fails to start ("address already in use").
func FreePort() (int, error) {
	lo, hi := portPool()
	return takePort(lo, hi)
}

// takePort hands out a port of [lo, hi) that was not handed out before and that nothing
// listens on.
func takePort(lo, hi int) (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 1000 {
		if port := lo + rand.IntN(hi-lo); handOut(port) {
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free loopback port in [%d, %d)", lo, hi)
}

// reservePort hands out port itself when it was not handed out before and nothing listens
// on it, for a component that keeps its port from one run of a kept stack to the next.
func reservePort(port int) bool {
	portsMu.Lock()
	defer portsMu.Unlock()
	return handOut(port)
}

// releasePorts lets FreePort and reservePort hand out ports again, once what listened on them
// stopped.
func releasePorts(ports map[memberPort]int) {
	portsMu.Lock()
	defer portsMu.Unlock()
	for _, p := range ports {
		delete(portsHanded, p)
	}
}

// handOut marks port as handed out when it was not and nothing listens on it (another
// process may); portsMu is held.
func handOut(port int) bool {
	if portsHanded[port] {
		return false
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = l.Close()
	portsHanded[port] = true
	return true
}

var (
	portsMu     sync.Mutex
	portsHanded = map[int]bool{}
)

// portPool is the range FreePort takes ports from: [20000, the ephemeral range's start) when
// that leaves room, otherwise the ports above the ephemeral range.
func portPool() (lo, hi int) {
	first, last := 32768, 60999 // Linux's default
	if data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(data)); len(f) == 2 {
			a, errA := strconv.Atoi(f[0])
			b, errB := strconv.Atoi(f[1])
			if errA == nil && errB == nil && a <= b {
				first, last = a, b
			}
		}
	}
	switch {
	case first-20000 >= 4096:
		return 20000, first
	case 65536-(last+1) >= 1024:
		return last + 1, 65536
	default: // an ephemeral range that takes (nearly) every port: no port is safe from it
		return 1024, 65536
	}
}

// poll calls check every interval until it returns true, an error, or the timeout passes.
// While it waits, it also fails as soon as one of the watched processes exits.
func Poll(ctx context.Context, what string, timeout time.Duration, watched []*Process, check func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		for _, p := range watched {
			if done, err := p.Exited(); done {
				return err
			}
		}
		ok, err := check(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last == nil {
				last = ctx.Err()
			}
			return fmt.Errorf("waiting for %s: %w", what, errors.Join(ctx.Err(), last))
		case <-time.After(250 * time.Millisecond):
		}
	}
}
