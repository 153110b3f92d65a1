package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/embeddedetcd"
)

// TestEtcdServesOnlyTheServer runs the server on an embedded etcd member wired as Run wires
// its own (embeddedetcd.Start, then ApplyTo the storage transport), and knocks on the member
// as another process on the host or in the pod would: in plain gRPC, over TLS without a
// client certificate, and with the client certificate of another member's CA. None of them
// reads or writes a key, while the server creates, reads, updates and deletes through it.
func TestEtcdServesOnlyTheServer(t *testing.T) {
	ctx := t.Context()
	etcd, err := embeddedetcd.Start(ctx, t.TempDir())
	require.NoError(t, err)
	defer etcd.Close()
	// Another server's member: its client certificate is genuine, of another CA.
	other, err := embeddedetcd.Start(ctx, t.TempDir())
	require.NoError(t, err)
	defer other.Close()

	s := startServer(t, external(etcd))
	defer s.stop()
	rootShards := s.client.OperatorV1alpha1().RootShards(namespace)
	created, err := rootShards.Create(ctx, newRootShard("root"), metav1.CreateOptions{})
	require.NoError(t, err)
	key := "/kcp-setups/operator.kcp.io/rootshards/" + namespace + "/root"
	stored, err := rawEtcd(t, etcd).Get(ctx, key)
	require.NoError(t, err)
	require.Len(t, stored.Kvs, 1, "the server's own certificate reads what it stored")

	caPEM, err := os.ReadFile(etcd.Client.CAFile)
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(caPEM))
	otherCfg, err := other.Client.TLSConfig()
	require.NoError(t, err)
	otherCfg.RootCAs = roots
	for name, cfg := range map[string]*tls.Config{
		"plain gRPC":                  nil,
		"TLS without a certificate":   {RootCAs: roots, MinVersion: tls.VersionTLS12},
		"a certificate of another CA": otherCfg,
	} {
		t.Run(name, func(t *testing.T) {
			url := etcd.ClientURL
			if cfg == nil {
				url = "http" + strings.TrimPrefix(url, "https")
			}
			c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, TLS: cfg, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
			require.NoError(t, err)
			defer func() { _ = c.Close() }()
			callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			_, err = c.Get(callCtx, key)
			assert.Error(t, err, "read the server's object")
			_, err = c.Put(callCtx, key, "overwritten")
			assert.Error(t, err, "overwrote the server's object")
			_, err = c.Delete(callCtx, key)
			assert.Error(t, err, "deleted the server's object")
		})
	}

	// The object is as the server stored it, and the server goes on.
	got, err := rootShards.Get(ctx, "root", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, created, got)
	got.Spec.ExtraArgs = []string{"--v=2"}
	updated, err := rootShards.Update(ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"--v=2"}, updated.Spec.ExtraArgs)
	require.NoError(t, rootShards.Delete(ctx, "root", metav1.DeleteOptions{}))
	_, err = rootShards.Get(ctx, "root", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "got %v", err)
}
