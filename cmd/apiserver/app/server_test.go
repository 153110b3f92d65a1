package app

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
