// Package framework is what the end-to-end tests add to the local stack (internal/localstack):
// the kcp doubles and stand-ins, the front-proxy double, the SNI router, a managed etcd run
// as processes, and the leak scan, which records what the tests' clients receive and what
// the host cluster holds while the stack runs.
package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kcp-setups/apiserver/internal/localstack"
)

// Options configure a stack: localstack's, and the leak scan.
type Options struct {
	// Dir holds the stack's state (localstack.Options.Dir).
	Dir string
	// EmbeddedEtcd makes the server keep its objects in its own embedded etcd.
	EmbeddedEtcd bool
	// Progress receives a line per step; nil discards them.
	Progress func(format string, args ...any)
	// RecordForLeakScan records what ScanForLeaks reads: every response the framework's
	// kubectl and client configs receive, and every Secret's keys, Event and status the host
	// cluster holds while the stack runs. Benchmarks and `make run` leave it off.
	RecordForLeakScan bool
	// NoKcp tells the server that no kcp can be reached (--kcp-dialer=none).
	NoKcp bool
	// LogReconciles makes the server log each reconcile with the object's key, for Reconciles.
	LogReconciles bool
	// EtcdMembers runs the managed etcds' members (localstack.Options.EtcdMembers).
	EtcdMembers bool
}

// LocalUp are the options of `make run`'s stack in dir (localstack.LocalUp).
func LocalUp(dir string) Options {
	o := localstack.LocalUp(dir)
	return Options{Dir: o.Dir, EmbeddedEtcd: o.EmbeddedEtcd, NoKcp: o.NoKcp, LogReconciles: o.LogReconciles, EtcdMembers: o.EtcdMembers}
}

// What the tests name of the local stack.
const (
	FakeNode        = localstack.FakeNode
	PodLog          = localstack.PodLog
	StorageClass    = localstack.StorageClass
	ServerNamespace = localstack.ServerNamespace
)

// ServerProcess is a kcp-setups server process beside the stack's own.
type ServerProcess = localstack.ServerProcess

// Stack is a running local stack, with the leak scan's recorder when asked for.
type Stack struct {
	*localstack.Stack
	// Recorder records the responses of the framework's kubectl and client configs, when
	// Options.RecordForLeakScan is set; nil otherwise.
	Recorder *Recorder
	witness  *witness
}

// Start brings the whole stack up (localstack.Start) and, for the leak scan, starts
// watching the host cluster. On error, everything started so far is stopped.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	s := &Stack{}
	lo := localstack.Options{Dir: opts.Dir, EmbeddedEtcd: opts.EmbeddedEtcd, Progress: opts.Progress, NoKcp: opts.NoKcp,
		LogReconciles: opts.LogReconciles, EtcdMembers: opts.EtcdMembers}
	if opts.RecordForLeakScan {
		lo.Observe = func(dir string) (localstack.Observer, error) {
			// What a previous run of a kept directory recorded is not this run's.
			_ = os.RemoveAll(filepath.Join(dir, "recorded"))
			r, err := newRecorder(filepath.Join(dir, "recorded", "responses"), newKeySet())
			s.Recorder = r
			return r, err
		}
	}
	ls, err := localstack.Start(ctx, lo)
	if err != nil {
		return nil, err
	}
	s.Stack = ls
	if s.Recorder == nil {
		return s, nil
	}
	// The witness outlives Start's context: it watches until Stop.
	s.witness, err = startWitness(context.WithoutCancel(ctx), s.UnobservedConfig, s.Recorder.keys,
		s.Path("recorded", "events.log"), s.Path("recorded", "statuses.log"))
	if err != nil {
		s.DumpLogs(os.Stderr, 40)
		s.Stack.Stop()
		return nil, fmt.Errorf("the leak scan's witness: %w", err)
	}
	return s, nil
}

// Stop stops the leak scan's witness and then the stack.
func (s *Stack) Stop() {
	if s.witness != nil {
		s.witness.stop()
	}
	s.Stack.Stop()
}
