package embeddedetcd

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/klog/v2"
)

// TestOnlyTheServerGetsIn starts the real member and knocks on both its listeners as another
// local process would: without TLS, with TLS but no client certificate, and with a client
// certificate of another CA. Every one is refused. The server's own credentials read and
// write, and a restart on the same directory reuses them and keeps the data.
func TestOnlyTheServerGetsIn(t *testing.T) {
	dir := t.TempDir()
	var logged bytes.Buffer
	ctx := klog.NewContext(t.Context(), klog.NewKlogr())
	klog.SetOutput(&logged)
	klog.LogToStderr(false)
	t.Cleanup(func() {
		klog.SetOutput(os.Stderr)
		klog.LogToStderr(true)
	})

	s, err := Start(ctx, dir)
	require.NoError(t, err)
	closed := false
	defer func() {
		if !closed {
			s.Close()
		}
	}()
	require.True(t, strings.HasPrefix(s.ClientURL, "https://127.0.0.1:"), s.ClientURL)
	require.True(t, strings.HasPrefix(s.PeerURL, "https://127.0.0.1:"), s.PeerURL)

	// The server's credentials: create, read, update, delete.
	own, err := s.Client.TLSConfig()
	require.NoError(t, err)
	c := client(t, s.ClientURL, own)
	_, err = c.Put(ctx, "/kcp-setups/k", "v1")
	require.NoError(t, err)
	_, err = c.Put(ctx, "/kcp-setups/k", "v2")
	require.NoError(t, err)
	assert.Equal(t, "v2", get(t, c, "/kcp-setups/k"))
	_, err = c.Put(ctx, "/kcp-setups/gone", "x")
	require.NoError(t, err)
	_, err = c.Delete(ctx, "/kcp-setups/gone")
	require.NoError(t, err)

	caPool := x509.NewCertPool()
	caPEM, err := os.ReadFile(s.Client.CAFile)
	require.NoError(t, err)
	require.True(t, caPool.AppendCertsFromPEM(caPEM))
	foreign := foreignClientTLS(t, caPool)
	// The probes below reach both listeners with the certificate each admits, so a refusal
	// is the stranger's, not a wrong path. The server's certificate is no peer's, and the
	// member's own is no client's.
	member := memberTLS(t, dir, caPool)
	assert.True(t, httpOK(t, s.ClientURL+"/health", own))
	assert.True(t, httpOK(t, s.PeerURL+"/members", member))
	assert.False(t, httpOK(t, s.PeerURL+"/members", own), "the server's certificate on the peer listener")
	assert.False(t, httpOK(t, s.ClientURL+"/health", member), "the member's certificate on the client listener")
	strangers := map[string]*tls.Config{
		"plain http":                   nil,
		"TLS without a certificate":    {RootCAs: caPool, MinVersion: tls.VersionTLS12},
		"a certificate of another CA":  foreign,
		"TLS trusting any certificate": {InsecureSkipVerify: true}, //nolint:gosec // a stranger's client
	}
	for name, cfg := range strangers {
		t.Run(name, func(t *testing.T) {
			for _, u := range []string{s.ClientURL, s.PeerURL} {
				// etcd's HTTP endpoints: /health on the client listener, /members on the peer one.
				for _, path := range []string{"/health", "/version", "/members"} {
					target := u + path
					if cfg == nil {
						target = "http" + strings.TrimPrefix(target, "https")
					}
					assert.False(t, httpOK(t, target, cfg), "%s answered", target)
				}
			}
			// The gRPC API, as etcdctl would call it.
			assertRefused(t, s.ClientURL, cfg)
		})
	}

	// The certificates: 0600 in a 0700 directory, paths logged, contents never.
	info, err := os.Stat(filepath.Join(dir, pkiDirName))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), info.Mode().Perm())
	contents := map[string][]byte{}
	for _, name := range []string{caCertFile, serverCertFile, serverKeyFile, clientCertFile, clientKeyFile} {
		path := filepath.Join(dir, pkiDirName, name)
		info, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o600), info.Mode().Perm(), name)
		contents[name], err = os.ReadFile(path)
		require.NoError(t, err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, pkiDirName))
	require.NoError(t, err)
	assert.Len(t, entries, 5, "no CA key, no leftovers")

	require.NoError(t, c.Close())
	s.Close()
	closed = true

	// A restart reuses the same certificates and serves the same data.
	s, err = Start(ctx, dir)
	require.NoError(t, err)
	closed = false
	for name, data := range contents {
		again, err := os.ReadFile(filepath.Join(dir, pkiDirName, name))
		require.NoError(t, err)
		assert.Equal(t, data, again, "%s changed across a restart", name)
	}
	c = client(t, s.ClientURL, own)
	defer func() { _ = c.Close() }()
	assert.Equal(t, "v2", get(t, c, "/kcp-setups/k"))
	assertRefused(t, s.ClientURL, foreign)

	klog.Flush()
	assert.Contains(t, logged.String(), "Embedded etcd is serving")
	for name, data := range contents {
		block := strings.Split(strings.TrimSpace(string(data)), "\n")
		assert.NotContains(t, logged.String(), block[1], "%s in the log", name)
	}
}

// TestPKIRenewal replaces a set of certificates that is broken or near its end, and keeps
// one that is whole.
func TestPKIRenewal(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name    string
		break_  func(t *testing.T, p pki)
		renewed bool
	}{
		{name: "whole", break_: func(*testing.T, pki) {}},
		{name: "a missing key", break_: func(t *testing.T, p pki) { require.NoError(t, os.Remove(p.path(clientKeyFile))) }, renewed: true},
		{name: "a truncated certificate", break_: func(t *testing.T, p pki) {
			require.NoError(t, os.WriteFile(p.path(serverCertFile), []byte("-----BEGIN CERTIFICATE-----\n"), 0o600))
		}, renewed: true},
		{name: "a key of another certificate", break_: func(t *testing.T, p pki) {
			key, err := os.ReadFile(p.path(serverKeyFile))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p.path(clientKeyFile), key, 0o600))
		}, renewed: true},
		{name: "near its end", break_: func(t *testing.T, p pki) {
			require.NoError(t, p.generate(now.Add(-certValidity+renewBefore/2)))
		}, renewed: true},
		{name: "widened modes", break_: func(t *testing.T, p pki) {
			require.NoError(t, os.Chmod(p.path(clientKeyFile), 0o644))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p, err := ensurePKI(dir)
			require.NoError(t, err)
			tc.break_(t, p)
			before, _ := os.ReadFile(p.path(caCertFile))
			p, err = ensurePKI(dir)
			require.NoError(t, err)
			require.NoError(t, p.check(now))
			after, err := os.ReadFile(p.path(caCertFile))
			require.NoError(t, err)
			assert.Equal(t, tc.renewed, !bytes.Equal(before, after), "renewed")
			info, err := os.Stat(p.path(clientKeyFile))
			require.NoError(t, err)
			assert.Equal(t, fs.FileMode(0o600), info.Mode().Perm())
		})
	}
}

func client(t *testing.T, url string, cfg *tls.Config) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, TLS: cfg, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	return c
}

func get(t *testing.T, c *clientv3.Client, key string) string {
	t.Helper()
	resp, err := c.Get(t.Context(), key)
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1)
	return string(resp.Kvs[0].Value)
}

// assertRefused reads a key through the gRPC API with cfg (plain gRPC when nil): it fails.
func assertRefused(t *testing.T, url string, cfg *tls.Config) {
	t.Helper()
	if cfg == nil {
		url = "http" + strings.TrimPrefix(url, "https")
	}
	c := client(t, url, cfg)
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	_, err := c.Get(ctx, "/kcp-setups/k")
	assert.Error(t, err, "a client without the server's certificate read from etcd")
	_, err = c.Put(ctx, "/kcp-setups/k", "stranger")
	assert.Error(t, err, "a client without the server's certificate wrote to etcd")
}

// httpOK says whether url answers 200 to a GET with cfg.
func httpOK(t *testing.T, url string, cfg *tls.Config) bool {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 3 * time.Second}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get(url)
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	t.Logf("%s: %s", url, resp.Status)
	return resp.StatusCode == http.StatusOK
}

// memberTLS presents the member's own certificate, as a peer would.
func memberTLS(t *testing.T, dir string, roots *x509.CertPool) *tls.Config {
	t.Helper()
	p := pki{dir: filepath.Join(dir, pkiDirName)}
	pair, err := tls.LoadX509KeyPair(p.path(serverCertFile), p.path(serverKeyFile))
	require.NoError(t, err)
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: roots, MinVersion: tls.VersionTLS13}
}

// foreignClientTLS is a client certificate of another CA, trusting the member's CA: what a
// process that made its own certificate would present.
func foreignClientTLS(t *testing.T, roots *x509.CertPool) *tls.Config {
	t.Helper()
	other := pki{dir: t.TempDir()}
	require.NoError(t, other.generate(time.Now()))
	pair, err := tls.LoadX509KeyPair(other.path(clientCertFile), other.path(clientKeyFile))
	require.NoError(t, err)
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: roots, MinVersion: tls.VersionTLS12}
}
