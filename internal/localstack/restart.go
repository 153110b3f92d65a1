package localstack

import (
	"context"
	"errors"
	"slices"
	"time"
)

// RestartKubeAPIServer stops kube-apiserver with SIGTERM and starts it again on the same
// port with the same arguments, as an upgrade of a control-plane node does, and returns once
// it is ready. Every client of it, the kcp-setups server's included, sees it go and come back.
func (s *Stack) RestartKubeAPIServer(ctx context.Context) error {
	i := slices.IndexFunc(s.procs, func(p *Process) bool { return p.name == "kube-apiserver" })
	if i < 0 {
		return errors.New("kube-apiserver is not part of the stack")
	}
	old := s.procs[i]
	old.Stop()
	s.progress("stopped kube-apiserver")
	p, err := old.Rerun()
	if err != nil {
		return err
	}
	s.procs[i] = p
	if err := s.waitForKubeAPIServer(ctx, p); err != nil {
		return err
	}
	s.progress("kube-apiserver is ready again")
	return nil
}

// waitForKubeAPIServer waits until kube-apiserver, run by p, answers /readyz.
func (s *Stack) waitForKubeAPIServer(ctx context.Context, p *Process) error {
	return Poll(ctx, "kube-apiserver to be ready", 2*time.Minute, []*Process{p}, func(ctx context.Context) (bool, error) {
		err := s.Kube.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
		return err == nil, err
	})
}

// ServerPID is the process id of the stack's kcp-setups server, or 0 when it is not
// running: a test tells from it that the server survived what it did.
func (s *Stack) ServerPID() int {
	if s.server == nil {
		return 0
	}
	if done, _ := s.server.Exited(); done {
		return 0
	}
	return s.server.cmd.Process.Pid
}

// Running reports whether the process still runs.
func (p *ServerProcess) Running() bool {
	done, _ := p.proc.Exited()
	return !done
}

// RestartServer stops the kcp-setups server with SIGTERM and starts it again on the same
// port with the same arguments, as a rollout of its Deployment does, and returns once
// kube-apiserver serves its group again. Unlike StopServer and StartServer it does not
// register the server again, so that the host sees no write of the framework's own.
func (s *Stack) RestartServer(ctx context.Context) error {
	if s.server == nil {
		return errors.New("the kcp-setups server was never started")
	}
	old := s.server
	old.Stop()
	s.progress("stopped the kcp-setups server")
	p, err := s.startServerProcess(ctx, old.name, s.ServerPort, old.cmd.Args[1:])
	if err != nil {
		return err
	}
	s.server = p
	return s.WaitForServer(ctx)
}

// PIDs are the process ids of the stack's running processes by name (etcd, kube-apiserver,
// the kcp-setups server, ...): a benchmark reads their CPU time from /proc.
func (s *Stack) PIDs() map[string]int {
	pids := map[string]int{}
	for _, p := range append(slices.Clone(s.procs), s.server) {
		if p == nil {
			continue
		}
		if done, _ := p.Exited(); !done {
			pids[p.name] = p.cmd.Process.Pid
		}
	}
	return pids
}

// CommandLine is the command line of the stack's running component name (kwok, etcd, ...),
// nil when there is none.
func (s *Stack) CommandLine(name string) []string {
	for _, p := range s.procs {
		if p.name == name {
			if done, _ := p.Exited(); !done {
				return p.cmd.Args
			}
		}
	}
	return nil
}
