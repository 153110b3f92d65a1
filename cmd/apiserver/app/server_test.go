package app

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

// loggingArgs are the same in every test: a process applies its logging configuration once.
var loggingArgs = []string{"--logging-format", "text", "-v", "1"}

// TestCommandReportsBadDelegationConfig runs the command as main does, with a kubeconfig that
// does not exist: it fails with an error that names the flag's file, and does not panic.
func TestCommandReportsBadDelegationConfig(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())

	cmd := NewCommand()
	cmd.SetArgs(append([]string{
		"--embedded-etcd-dir", t.TempDir(),
		"--bind-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(port),
		"--cert-dir", t.TempDir(),
		"--authentication-kubeconfig", "/nonexistent/kubeconfig",
		"--authorization-kubeconfig", "/nonexistent/kubeconfig",
		"--kubeconfig", "/nonexistent/kubeconfig",
	}, loggingArgs...))
	cmd.SetContext(t.Context())
	err = cmd.Execute()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/nonexistent/kubeconfig")
}

// TestCommandRejectsBadFlags checks that flag validation happens before anything starts.
func TestCommandRejectsBadFlags(t *testing.T) {
	cmd := NewCommand()
	cmd.SetArgs(append([]string{"--embedded-etcd-dir", ""}, loggingArgs...))
	cmd.SetContext(t.Context())
	err := cmd.Execute()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--embedded-etcd-dir must be set")
}

// TestKubeAPIRateLimit checks the host client's rate limit flags: their defaults are
// kube-scheduler's, not client-go's 5/10, they reach the host configuration, and nonsense is
// refused before anything starts.
func TestKubeAPIRateLimit(t *testing.T) {
	o := NewOptions()
	host := o.hostConfig(&rest.Config{Host: "https://host.example"})
	assert.Equal(t, float32(50), host.QPS)
	assert.Equal(t, 100, host.Burst)
	assert.Equal(t, "https://host.example", host.Host)

	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	require.NoError(t, fs.Parse([]string{"--kube-api-qps", "200", "--kube-api-burst", "400"}))
	host = o.hostConfig(&rest.Config{})
	assert.Equal(t, float32(200), host.QPS)
	assert.Equal(t, 400, host.Burst)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kube-api-qps", "0"}, "--kube-api-qps must be positive"},
		{[]string{"--kube-api-qps", "-1"}, "--kube-api-qps must be positive"},
		{[]string{"--kube-api-burst", "0"}, "--kube-api-burst must be at least 1"},
		{[]string{"--kube-api-qps", "80", "--kube-api-burst", "40"}, "--kube-api-burst must be at least 1 and at least --kube-api-qps (80)"},
	} {
		cmd := NewCommand()
		cmd.SetArgs(append(append([]string{"--embedded-etcd-dir", t.TempDir()}, tc.args...), loggingArgs...))
		cmd.SetContext(t.Context())
		err := cmd.Execute()
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.want, tc.args)
	}
}

// TestMaxKubeconfigValidity checks --max-kubeconfig-validity: 30 days by default, parsed as a
// duration, and at least the hour cert-manager issues at the least.
func TestMaxKubeconfigValidity(t *testing.T) {
	o := NewOptions()
	assert.Equal(t, 720*time.Hour, o.MaxKubeconfigValidity)
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	require.NoError(t, fs.Parse([]string{"--max-kubeconfig-validity", "2160h"}))
	assert.Equal(t, 2160*time.Hour, o.MaxKubeconfigValidity)

	cmd := NewCommand()
	cmd.SetArgs(append([]string{"--embedded-etcd-dir", t.TempDir(), "--max-kubeconfig-validity", "30m"}, loggingArgs...))
	cmd.SetContext(t.Context())
	err := cmd.Execute()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--max-kubeconfig-validity must be at least 1h")
}
