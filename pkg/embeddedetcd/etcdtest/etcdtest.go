// Package etcdtest runs a real etcd member for the tests of a package that reads or saves
// one: the embedded member the server itself runs, with its TLS.
package etcdtest

import (
	"crypto/tls"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kcp-setups/apiserver/pkg/embeddedetcd"
)

// Member starts an embedded member in a temporary directory, stopped with the test, and
// answers it, the TLS its clients need and a client of it.
func Member(t testing.TB) (*embeddedetcd.Server, *tls.Config, *clientv3.Client) {
	t.Helper()
	srv, err := embeddedetcd.Start(t.Context(), filepath.Join(t.TempDir(), "etcd"))
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	cfg, err := srv.Client.TLSConfig()
	require.NoError(t, err)
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.ClientURL}, TLS: cfg, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return srv, cfg, c
}
