package localstack

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ServerProcess is a kcp-setups server process beside the stack's own, for tests of how
// several replicas, or the install manifests' flags, behave.
type ServerProcess struct {
	// Port is where it serves, on loopback, with the stack's serving certificate.
	Port  int
	proc  *Process
	stack *Stack
}

// ServingArgs make a server serve on port with the stack's serving certificate, which the
// APIService trusts.
func (s *Stack) ServingArgs(port int) []string {
	return []string{"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + s.pki.kcpSetups.CertFile, "--tls-private-key-file=" + s.pki.kcpSetups.KeyFile}
}

// DelegationArgs make a server authenticate, authorize and reach the host cluster with
// kubeconfig, as a pod does with its ServiceAccount, and reach the kcp it realizes as a
// server outside the host cluster does: by port-forward through kube-apiserver (kwok
// forwards the pods' ports, see ForwardPods), asking kcp for its readiness every 5 s. On a
// stack with Options.NoKcp, the server is told that no kcp can be reached; with
// Options.EtcdMembers too, it still reaches the managed etcds' members by port-forward.
func (s *Stack) DelegationArgs(kubeconfig string) []string {
	dialers := []string{"--kcp-dialer=port-forward"}
	if s.opts.NoKcp {
		dialers = []string{"--kcp-dialer=none"}
		if s.opts.EtcdMembers {
			dialers = append(dialers, "--etcd-dialer=port-forward")
		}
	}
	args := []string{"--authentication-kubeconfig=" + kubeconfig, "--authorization-kubeconfig=" + kubeconfig, "--kubeconfig=" + kubeconfig}
	return append(append(args, dialers...), "--kcp-health-interval=5s")
}

// FreePort is an unused loopback port.
func (s *Stack) FreePort() (int, error) { return FreePort() }

// StartServerProcess starts a kcp-setups server named name (its log is logs/<name>.log)
// with args, which must make it serve on port (ServingArgs), and waits until it is ready.
// The stack's Stop stops it too.
func (s *Stack) StartServerProcess(ctx context.Context, name string, port int, args []string) (*ServerProcess, error) {
	p, err := s.startServerProcess(ctx, name, port, args)
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, p)
	return &ServerProcess{Port: port, proc: p, stack: s}, nil
}

// LaunchServerProcess is StartServerProcess without the wait, for a server that may never
// become ready.
func (s *Stack) LaunchServerProcess(name string, port int, args []string) (*ServerProcess, error) {
	p, err := StartProcess(s.Path("logs"), name, s.Bin("kcp-setups-apiserver"), args...)
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, p)
	return &ServerProcess{Port: port, proc: p, stack: s}, nil
}

func (s *Stack) startServerProcess(ctx context.Context, name string, port int, args []string) (*Process, error) {
	p, err := StartProcess(s.Path("logs"), name, s.Bin("kcp-setups-apiserver"), args...)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.pki.server.CertPEM)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}}}
	readyz := "https://127.0.0.1:" + strconv.Itoa(port) + "/readyz"
	if err := Poll(ctx, name+" to be ready", 2*time.Minute, []*Process{p}, func(ctx context.Context) (bool, error) {
		return HTTPOK(ctx, client, readyz)
	}); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// Config is a client config of the process, as the admin.
func (p *ServerProcess) Config() *rest.Config {
	return p.stack.wrap(&rest.Config{
		Host: "https://127.0.0.1:" + strconv.Itoa(p.Port),
		TLSClientConfig: rest.TLSClientConfig{ServerName: "localhost", CAData: p.stack.pki.server.CertPEM,
			CertData: p.stack.pki.admin.CertPEM, KeyData: p.stack.pki.admin.KeyPEM},
	})
}

// Log is the process's log so far.
func (p *ServerProcess) Log() string {
	data, err := os.ReadFile(p.proc.logFile)
	if err != nil {
		return err.Error()
	}
	return string(data)
}

// Stop stops the process with SIGTERM.
func (p *ServerProcess) Stop() { p.proc.Stop() }

// Kill ends the process with SIGKILL, as a crash would.
func (p *ServerProcess) Kill() { p.proc.Kill() }

// WaitForExit waits until the process ends by itself and returns its exit code, or an error
// once ctx is done with the process still running.
func (p *ServerProcess) WaitForExit(ctx context.Context) (int, error) {
	select {
	case <-p.proc.done:
		return p.proc.cmd.ProcessState.ExitCode(), nil
	case <-ctx.Done():
		return 0, fmt.Errorf("%s still runs: %w", p.proc.name, ctx.Err())
	}
}

// ServerLog is the stack's own server's log so far.
func (s *Stack) ServerLog() string {
	if s.server == nil {
		return ""
	}
	return (&ServerProcess{proc: s.server}).Log()
}

// TokenKubeconfig writes a kubeconfig for kube-apiserver that authenticates with a bearer
// token, as a pod's ServiceAccount does, and returns its path.
func (s *Stack) TokenKubeconfig(name, token string) (string, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: s.AdminConfig.Host, CertificateAuthorityData: s.pki.cluster.CertPEM}
	cfg.AuthInfos["user"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "user"}
	cfg.CurrentContext = "local"
	path := s.Path("pki", "users", name+".kubeconfig")
	if err := os.MkdirAll(s.Path("pki", "users"), 0o700); err != nil {
		return "", err
	}
	return path, clientcmd.WriteToFile(*cfg, path)
}
