// Package localstack runs the whole local stack on loopback, as separate processes built from
// pinned modules (hack/tools/build.sh): etcd, kube-apiserver with the aggregation layer,
// kube-controller-manager, kube-scheduler, kwok with a fake node, cert-manager, and the
// kcp-setups server registered through an APIService. `make run` (hack/local-up) runs it;
// the end-to-end tests run it through test/framework, which adds the test doubles and the
// leak scan.
package localstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Options configure a stack.
type Options struct {
	// Dir holds the stack's state. When empty, a temporary directory is used and removed by
	// Stop; when set (as by `make run`), the data survives a restart.
	Dir string
	// EmbeddedEtcd makes the kcp-setups server keep its objects in its own embedded etcd, as
	// `make run` does, instead of the stack's etcd.
	EmbeddedEtcd bool
	// Progress receives a line per step; nil discards them.
	Progress func(format string, args ...any)
	// Observe, when set, is called once the stack's directory is known, before anything
	// starts, for the Observer of what the stack's clients receive (test/framework's leak
	// scan). `make run` leaves it unset.
	Observe func(dir string) (Observer, error)
	// NoKcp tells the kcp-setups server that no kcp can be reached (--kcp-dialer=none), as
	// `make run` does: kwok's pods run nothing, and no test leads their ports anywhere.
	NoKcp bool
	// LogReconciles makes the kcp-setups server log each reconcile with the object's key
	// (--vmodule=queue=4), so that a test counts its own objects' reconciles with Reconciles
	// while other tests' objects share the stack. Benchmarks and `make run` leave it off.
	LogReconciles bool
	// EtcdMembers runs the members of every managed etcd the server realizes as etcd
	// processes, and the backup agents of those with a backup, and leads their pods' ports to
	// them, as `make run` does: kwok's pods run nothing. The end-to-end tests, which run the
	// members and agents they need themselves, leave it off.
	EtcdMembers bool
}

// Observer sees what the stack's clients receive: every client config the stack hands out is
// wrapped by it, and every kubectl run and direct response of the server is reported to it.
type Observer interface {
	Wrap(cfg *rest.Config) *rest.Config
	Kubectl(args []string, output ...string)
	Response(label string, body []byte)
}

// LocalUp are the options of `make run`'s stack in dir: its state kept there, the server on
// its embedded etcd, no kcp behind kwok's pods, and a managed etcd's members run.
func LocalUp(dir string) Options {
	return Options{Dir: dir, EmbeddedEtcd: true, NoKcp: true, EtcdMembers: true}
}

// Stack is a running local control plane.
type Stack struct {
	// Dir holds the state: pki/, logs/, etcd/ and the kubeconfig.
	Dir string
	// AdminKubeconfig is the path of a system:masters kubeconfig for kube-apiserver.
	AdminKubeconfig string
	// AdminConfig is the same as a client config.
	AdminConfig *rest.Config
	// Kube and Dynamic are admin clients of kube-apiserver.
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// EtcdURL is the client URL of the stack's etcd.
	EtcdURL string
	// ServerPort is the port of the kcp-setups server.
	ServerPort int
	// LinkPort is the port of its link listener (--link-bind-address), on loopback: the
	// Links' bootstrap Secrets name https://127.0.0.1:<LinkPort>.
	LinkPort int
	// UnobservedConfig is AdminConfig without the Observer, for the observer's own reads.
	UnobservedConfig *rest.Config

	observer Observer

	binDir    string
	pki       *pki
	opts      Options
	temporary bool
	procs     []*Process
	server    *Process
	progress  func(format string, args ...any)
	// etcdRunner runs the managed etcds' members and backup agents, with Options.EtcdMembers.
	etcdRunner *etcdRunner
}

// Start brings the whole stack up and returns once the kcp-setups API is served through
// kube-apiserver. On error, everything started so far is stopped.
func Start(ctx context.Context, opts Options) (s *Stack, err error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	s = &Stack{Dir: opts.Dir, opts: opts, binDir: filepath.Join(root, "_output", "bin"), progress: opts.Progress}
	if s.progress == nil {
		s.progress = func(string, ...any) {}
	}
	if s.Dir == "" {
		if s.Dir, err = os.MkdirTemp("", "kcp-setups-e2e-"); err != nil {
			return nil, err
		}
		s.temporary = true
	}
	if err := s.checkBinaries(); err != nil {
		return nil, err
	}
	if opts.Observe != nil {
		if s.observer, err = opts.Observe(s.Dir); err != nil {
			return nil, err
		}
	}
	defer func() {
		if err != nil {
			s.DumpLogs(os.Stderr, 40)
			s.Stop()
		}
	}()

	type step struct {
		name string
		run  func(context.Context) error
	}
	steps := []step{
		{"certificates", s.createPKI},
		{"etcd", s.startEtcd},
		{"kube-apiserver", s.startKubeAPIServer},
		{"kube-controller-manager and kube-scheduler", s.startControllers},
		{"kwok and a fake node", s.startKwok},
		{"cert-manager", s.startCertManager},
		{"kcp-setups-apiserver", s.StartServer},
	}
	if opts.EtcdMembers {
		steps = append(steps, step{"the managed etcds' members and backup agents", s.startEtcdRunner})
	}
	for _, step := range steps {
		s.progress("starting %s", step.name)
		start := time.Now()
		if err := step.run(ctx); err != nil {
			return s, fmt.Errorf("%s: %w", step.name, err)
		}
		s.progress("%s is up (%s)", step.name, time.Since(start).Round(100*time.Millisecond))
	}
	return s, nil
}

// Stop stops every component in reverse order and removes a temporary directory.
func (s *Stack) Stop() {
	stop := func(p *Process) {
		start := time.Now()
		p.Stop()
		s.progress("stopped %s (%s)", p.name, time.Since(start).Round(100*time.Millisecond))
	}
	if s.etcdRunner != nil {
		start := time.Now()
		s.etcdRunner.stop()
		s.progress("stopped the managed etcds' members and backup agents (%s)", time.Since(start).Round(100*time.Millisecond))
	}
	if s.server != nil {
		stop(s.server)
	}
	for i := len(s.procs) - 1; i >= 0; i-- {
		stop(s.procs[i])
	}
	if s.temporary {
		_ = os.RemoveAll(s.Dir)
	}
}

// DumpLogs writes the last lines of every component's log to w.
func (s *Stack) DumpLogs(w io.Writer, lines int) {
	all := append([]*Process{}, s.procs...)
	if s.server != nil {
		all = append(all, s.server)
	}
	for _, p := range all {
		_, _ = fmt.Fprintf(w, "===== %s (%s) =====\n%s\n", p.name, p.logFile, p.Tail(lines))
	}
}

func (s *Stack) Path(elem ...string) string {
	return filepath.Join(append([]string{s.Dir}, elem...)...)
}

func (s *Stack) Bin(name string) string {
	return filepath.Join(s.binDir, name)
}

// start starts a component and remembers it for Stop.
func (s *Stack) start(name string, args ...string) (*Process, error) {
	if err := os.MkdirAll(s.Path("logs"), 0o700); err != nil {
		return nil, err
	}
	p, err := StartProcess(s.Path("logs"), name, s.Bin(name), args...)
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, p)
	return p, nil
}

func (s *Stack) checkBinaries() error {
	var missing []string
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok", "cert-manager-controller", "helm", "versitygw", "kcp-setups-apiserver", "kubectl-kcp_setups"} {
		if _, err := os.Stat(s.Bin(b)); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s in %s: run `make build tools` first", strings.Join(missing, ", "), s.binDir)
	}
	return nil
}

// repoRoot finds the directory of the project's go.mod, from the working directory up.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/kcp-setups/apiserver\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the kcp-setups repository")
		}
		dir = parent
	}
}

// adminClients loads the admin kubeconfig into clients.
func (s *Stack) adminClients() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", s.AdminKubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 50, 100
	s.UnobservedConfig = rest.CopyConfig(cfg)
	s.AdminConfig = s.wrap(cfg)
	if s.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	s.Dynamic, err = dynamic.NewForConfig(cfg)
	return err
}

// wrap is cfg as the Observer sees it, or cfg when there is none.
func (s *Stack) wrap(cfg *rest.Config) *rest.Config {
	if s.observer == nil {
		return cfg
	}
	return s.observer.Wrap(cfg)
}

// observeKubectl reports a kubectl run to the Observer, if any.
func (s *Stack) observeKubectl(args []string, output ...string) {
	if s.observer != nil {
		s.observer.Kubectl(args, output...)
	}
}

// observeResponse reports a response of the server's to the Observer, if any.
func (s *Stack) observeResponse(label string, body []byte) {
	if s.observer != nil {
		s.observer.Response(label, body)
	}
}

// Options are the options the stack was started with.
func (s *Stack) Options() Options { return s.opts }

// Track makes Stop stop p too, in place of old when old is one of the stack's.
func (s *Stack) Track(old, p *Process) {
	if i := slices.Index(s.procs, old); old != nil && i >= 0 {
		s.procs[i] = p
		return
	}
	s.procs = append(s.procs, p)
}

// ServiceAccountKeyFile is the key kube-apiserver signs and verifies ServiceAccount tokens
// with.
func (s *Stack) ServiceAccountKeyFile() string { return s.pki.serviceAccountKey }
