package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLinkListenerURL checks --link-bind-address and --link-advertise-url: off by default,
// the advertised URL derived only from a bind address that names a host, and bad values
// refused.
func TestLinkListenerURL(t *testing.T) {
	for _, tc := range []struct {
		bind, advertise, want, err string
	}{
		{},
		{bind: "10.0.0.5:9443", want: "https://10.0.0.5:9443"},
		{bind: "links.example.com:9443", want: "https://links.example.com:9443"},
		{bind: "[fd00::1]:9443", want: "https://[fd00::1]:9443"},
		{bind: "0.0.0.0:9443", advertise: "https://links.example.com", want: "https://links.example.com"},
		{bind: ":9443", advertise: "https://links.example.com:443/", want: "https://links.example.com:443/"},
		{bind: "127.0.0.1:9443", advertise: "https://localhost:9443", want: "https://localhost:9443"},
		{bind: "0.0.0.0:9443", err: "--link-advertise-url must be set"},
		{bind: "[::]:9443", err: "--link-advertise-url must be set"},
		{bind: ":9443", err: "--link-advertise-url must be set"},
		{advertise: "https://links.example.com", err: "--link-advertise-url needs --link-bind-address"},
		{bind: "9443", err: "--link-bind-address must be host:port"},
		{bind: "host:0", err: "port from 1 to 65535"},
		{bind: "host:70000", err: "port from 1 to 65535"},
		{bind: "host:https", err: "port from 1 to 65535"},
		{bind: "Bad_Host:9443", err: "an IP address or a DNS name"},
		{bind: ":9443", advertise: "http://links.example.com", err: "must be an https URL"},
		{bind: ":9443", advertise: "https://", err: "must be an https URL"},
		{bind: ":9443", advertise: "https://u:p@links.example.com", err: "must be an https URL"},
		{bind: ":9443", advertise: "https://links.example.com/path", err: "must be an https URL"},
		{bind: ":9443", advertise: "https://links.example.com?x=1", err: "must be an https URL"},
		{bind: ":9443", advertise: "links.example.com:9443", err: "must be an https URL"},
	} {
		got, err := linkListenerURL(tc.bind, tc.advertise)
		if tc.err != "" {
			require.Error(t, err, "%+v", tc)
			assert.Contains(t, err.Error(), tc.err, "%+v", tc)
			continue
		}
		require.NoError(t, err, "%+v", tc)
		assert.Equal(t, tc.want, got, "%+v", tc)
	}
}

// TestCommandRejectsBadLinkFlags checks that the link listener's flags are validated before
// anything starts.
func TestCommandRejectsBadLinkFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--link-bind-address", "0.0.0.0:9443"}, "--link-advertise-url must be set"},
		{[]string{"--link-bind-address", "localhost:9443", "--link-advertise-url", "http://localhost:9443"}, "--link-advertise-url must be an https URL"},
		{[]string{"--link-advertise-url", "https://links.example.com"}, "--link-advertise-url needs --link-bind-address"},
	} {
		err := execute(t, tc.args...)
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.want, tc.args)
	}
}

// execute runs the command with args, an embedded etcd directory of the test's and the
// tests' logging, and returns its error.
func execute(t *testing.T, args ...string) error {
	cmd := NewCommand()
	cmd.SetArgs(append(append([]string{"--embedded-etcd-dir", t.TempDir()}, args...), loggingArgs...))
	cmd.SetContext(t.Context())
	return cmd.Execute()
}
