package localstack

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
)

// UserKubeconfig writes a kubeconfig for kube-apiserver that authenticates as user in groups,
// with a client certificate of the cluster CA, and returns its path.
func (s *Stack) UserKubeconfig(user string, groups ...string) (string, error) {
	name := "user-" + strings.NewReplacer(":", "-", "/", "-").Replace(user)
	kp, err := s.pki.cluster.ClientCert(s.Path("pki", "users"), name, user, groups...)
	if err != nil {
		return "", err
	}
	path := s.Path("pki", "users", name+".kubeconfig")
	return path, WriteKubeconfig(path, s.AdminConfig.Host, s.pki.cluster.CertPEM, kp)
}

// KubectlWith runs the stack's kubectl with the given kubeconfig and returns its standard
// output and standard error apart, as a user sees them.
func (s *Stack) KubectlWith(ctx context.Context, kubeconfig string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.CommandContext(ctx, s.Bin("kubectl"), append(s.KubectlFlags(kubeconfig), args...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	s.observeKubectl(args, out.String(), errOut.String())
	return out.String(), errOut.String(), err
}

// KubectlCommand returns a kubectl command of the stack with the given kubeconfig, for a
// test that must read its output as it streams. Its output is the caller's: the leak scan's
// recorder does not see it.
func (s *Stack) KubectlCommand(ctx context.Context, kubeconfig string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, s.Bin("kubectl"), append(s.KubectlFlags(kubeconfig), args...)...)
}

// ServerGet GETs path from the kcp-setups server directly, not through kube-apiserver, as
// the admin, for what is not proxied (such as /metrics).
func (s *Stack) ServerGet(ctx context.Context, path string) (string, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.pki.server.CertPEM)
	cert, err := tls.X509KeyPair(s.pki.admin.CertPEM, s.pki.admin.KeyPEM)
	if err != nil {
		return "", err
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, ServerName: "localhost", Certificates: []tls.Certificate{cert}}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://127.0.0.1:"+strconv.Itoa(s.ServerPort)+path, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	s.observeResponse(fmt.Sprintf("GET %s %d (the server directly)", path, resp.StatusCode), body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	return string(body), nil
}

// ServerConfig is a client config of the kcp-setups server itself, not through
// kube-apiserver, as the admin: for what must bypass the aggregation layer, such as a
// benchmark of it.
func (s *Stack) ServerConfig() *rest.Config {
	return s.wrap(&rest.Config{
		Host: "https://127.0.0.1:" + strconv.Itoa(s.ServerPort),
		TLSClientConfig: rest.TLSClientConfig{ServerName: "localhost", CAData: s.pki.server.CertPEM,
			CertData: s.pki.admin.CertPEM, KeyData: s.pki.admin.KeyPEM},
	})
}
