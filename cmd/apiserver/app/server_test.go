package app

import (
	"net"
	"os"
	"path/filepath"
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
		err := execute(t, tc.args...)
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

// TestLeaderElectionFlagsRefused checks that --leader-elect-* durations that
// leaderelection.NewLeaderElector would refuse (by a panic inside RunOrDie, once serving)
// make the command exit with a message naming the flags, before anything starts.
func TestLeaderElectionFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"lease equal to the renew deadline", []string{"--leader-elect-lease-duration", "10s", "--leader-elect-renew-deadline", "10s"},
			"--leader-elect-lease-duration (10s) must be greater than --leader-elect-renew-deadline (10s)"},
		{"lease shorter than the renew deadline", []string{"--leader-elect-lease-duration", "5s"},
			"--leader-elect-lease-duration (5s) must be greater than --leader-elect-renew-deadline (10s)"},
		{"renew deadline equal to the retry period", []string{"--leader-elect-renew-deadline", "2s", "--leader-elect-retry-period", "2s"},
			"--leader-elect-renew-deadline (2s) must be greater than --leader-elect-retry-period (2s) times its jitter factor 1.2 (2.4s)"},
		{"renew deadline equal to the retry period with its jitter", []string{"--leader-elect-renew-deadline", "2400ms", "--leader-elect-retry-period", "2s"},
			"--leader-elect-renew-deadline (2.4s) must be greater than --leader-elect-retry-period (2s) times its jitter factor 1.2 (2.4s)"},
		{"zero lease", []string{"--leader-elect-lease-duration", "0"}, "--leader-elect-lease-duration must be greater than zero, not 0s"},
		{"negative lease", []string{"--leader-elect-lease-duration", "-15s"}, "--leader-elect-lease-duration must be greater than zero, not -15s"},
		{"zero renew deadline", []string{"--leader-elect-renew-deadline", "0"}, "--leader-elect-renew-deadline must be greater than zero, not 0s"},
		{"negative renew deadline", []string{"--leader-elect-renew-deadline", "-1s"}, "--leader-elect-renew-deadline must be greater than zero, not -1s"},
		{"zero retry period", []string{"--leader-elect-retry-period", "0"}, "--leader-elect-retry-period must be greater than zero, not 0s"},
		{"negative retry period", []string{"--leader-elect-retry-period", "-2s"}, "--leader-elect-retry-period must be greater than zero, not -2s"},
		{"a removed lock kind", []string{"--leader-elect-resource-lock", "configmaps"}, `--leader-elect-resource-lock must be "leases", not "configmaps"`},
		{"no lease name", []string{"--leader-elect-resource-name", ""}, "--leader-elect-resource-name must be set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := NewCommand()
			cmd.SetArgs(append(append([]string{"--embedded-etcd-dir", t.TempDir()}, tc.args...), loggingArgs...))
			cmd.SetContext(t.Context())
			err := cmd.Execute()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestLeaderElectionFlagsAccepted checks that the defaults, durations kube-controller-manager
// would take, and any durations with --leader-elect=false pass validation.
func TestLeaderElectionFlagsAccepted(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--leader-elect-lease-duration", "60s", "--leader-elect-renew-deadline", "40s", "--leader-elect-retry-period", "5s"},
		{"--leader-elect=false", "--leader-elect-lease-duration", "0", "--leader-elect-retry-period", "-1s"},
	} {
		o := NewOptions()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		require.NoError(t, fs.Parse(args))
		assert.NoError(t, o.Validate(), args)
	}
}

// TestControllersReadyzCheck checks that a server with controllers has the readyz check
// "controllers", the Status the controllers record a failed start in.
func TestControllersReadyzCheck(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: host, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: host, user: {token: t}}]
contexts: [{name: host, context: {cluster: host, user: host}}]
current-context: host
`), 0o600))
	o := NewOptions()
	o.RecommendedOptions.SecureServing.BindPort = 0
	o.RecommendedOptions.SecureServing.ServerCert.CertDirectory = t.TempDir()
	o.RecommendedOptions.CoreAPI.CoreAPIKubeconfigPath = kubeconfig
	o.RecommendedOptions.Authentication = nil
	o.RecommendedOptions.Authorization = nil
	o.RecommendedOptions.Admission = nil
	o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList = []string{"http://127.0.0.1:1"}
	config, err := o.Config()
	require.NoError(t, err)
	require.NotNil(t, config.ExtraConfig.Controllers)
	status := config.ExtraConfig.Controllers.Status
	require.NotNil(t, status)
	var names []string
	for _, check := range config.GenericConfig.ReadyzChecks {
		names = append(names, check.Name())
		if check.Name() == "controllers" {
			assert.Same(t, status, check)
		}
	}
	assert.Contains(t, names, "controllers")
}

func TestWatchNamespacesFlag(t *testing.T) {
	o := NewOptions()
	assert.Empty(t, o.WatchNamespaces, "every namespace by default")
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	require.NoError(t, fs.Parse([]string{"--watch-namespaces", "team-b,team-a"}))
	assert.Equal(t, "team-b,team-a", o.WatchNamespaces)

	cmd := NewCommand()
	cmd.SetArgs(append([]string{"--embedded-etcd-dir", t.TempDir(), "--watch-namespaces", "team-a,team/b"}, loggingArgs...))
	cmd.SetContext(t.Context())
	err := cmd.Execute()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--watch-namespaces: "team/b" is not a namespace name`)
}

// TestEtcdDialerFlag checks --etcd-dialer: empty by default (the managed etcds are reached as
// kcp is), one of --kcp-dialer's values, and nonsense refused before anything starts.
func TestEtcdDialerFlag(t *testing.T) {
	o := NewOptions()
	assert.Empty(t, o.EtcdDialer)
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	require.NoError(t, fs.Parse([]string{"--kcp-dialer", "none", "--etcd-dialer", "port-forward"}))
	assert.Equal(t, "port-forward", o.EtcdDialer)
	assert.NotContains(t, errorsOf(o.Validate()), "--etcd-dialer")

	err := execute(t, "--etcd-dialer", "carrier-pigeon")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--etcd-dialer must be empty or one of service-dns, port-forward, none, not "carrier-pigeon"`)
}

// errorsOf is err's text, or nothing.
func errorsOf(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
