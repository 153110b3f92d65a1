package etcdsnapshot

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/kcp-setups/apiserver/internal/localstack"
	"github.com/kcp-setups/apiserver/pkg/embeddedetcd/etcdtest"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup/agent"
)

// realAgent serves a backup agent of base root over mutual TLS in front of a real member, and
// answers the rest.Config the server would dial it with: kcp's etcd client certificate.
func realAgent(t *testing.T) func() (*rest.Config, error) {
	t.Helper()
	srv, memberTLS, _ := etcdtest.Member(t)
	store, err := etcdbackup.NewDirStore(filepath.Join(t.TempDir(), "snapshots"))
	require.NoError(t, err)
	dir := t.TempDir()
	ca, err := localstack.LoadOrCreateCA(dir, "etcd-client-ca")
	require.NoError(t, err)
	serving, err := ca.Issue(dir, "root-etcd-backup", localstack.CertSpec{CommonName: "root-etcd-backup", DNSNames: []string{"localhost"},
		Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}})
	require.NoError(t, err)
	client, err := ca.Issue(dir, "root-kcp", localstack.CertSpec{CommonName: "root-kcp", Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	require.NoError(t, err)
	pair, err := tls.X509KeyPair(serving.CertPEM, serving.KeyPEM)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	s := &agent.Server{Store: store, Endpoints: []string{srv.ClientURL}, TLS: memberTLS, Base: "root", Retention: 2}
	ts := httptest.NewUnstartedServer(s.Handler())
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return func() (*rest.Config, error) {
		return &rest.Config{Host: ts.URL, TLSClientConfig: rest.TLSClientConfig{ServerName: "localhost",
			CertData: client.CertPEM, KeyData: client.KeyPEM, CAData: ca.CertPEM}}, nil
	}
}

// TestRunnerTakesThroughTheAgent: a scheduled and an on-demand snapshot taken through a real
// agent, one at a time, each ending with the owner called back, an Event and the store's
// list; the on-demand one asked again is found taken; an agent that cannot be reached is a
// SnapshotFailed Event and a pause before the next try.
func TestRunnerTakesThroughTheAgent(t *testing.T) {
	reach := realAgent(t)
	r := NewRunner()
	done := make(chan struct{}, 4)
	ctx := context.Background()
	t0 := time.Now().UTC().Truncate(time.Minute)

	require.True(t, r.Start(ctx, "kcp/root-etcd", Request{Scheduled: t0, Agent: reach, Done: func() { done <- struct{}{} }}))
	assert.False(t, r.Start(ctx, "kcp/root-etcd", Request{Name: "root-20261128-101500", Agent: reach}), "never two at once for one etcd")
	<-done
	res, events, ok := r.Last("kcp/root-etcd")
	require.True(t, ok)
	require.NoError(t, res.Err)
	require.NotNil(t, res.Taken)
	assert.Equal(t, t0, res.Scheduled)
	require.Len(t, res.Listed, 1)
	assert.Equal(t, res.Taken.Name, res.Listed[0].Name)
	require.Len(t, events, 1)
	assert.Equal(t, "SnapshotTaken", events[0].Reason)
	assert.Contains(t, events[0].Message, res.Taken.Name)
	_, events, _ = r.Last("kcp/root-etcd")
	assert.Empty(t, events, "told once")

	require.True(t, r.Start(ctx, "kcp/root-etcd", Request{Name: "root-20261128-101500", Agent: reach, Done: func() { done <- struct{}{} }}))
	<-done
	res, _, _ = r.Last("kcp/root-etcd")
	require.NoError(t, res.Err)
	assert.Equal(t, "root-20261128-101500", res.Taken.Name, "under the name the request answered")
	assert.Len(t, res.Listed, 2)

	require.True(t, r.Start(ctx, "kcp/root-etcd", Request{Name: "root-20261128-101500", Agent: reach, Done: func() { done <- struct{}{} }}))
	<-done
	res, events, _ = r.Last("kcp/root-etcd")
	require.NoError(t, res.Err)
	assert.True(t, res.Existed, "taken before: its status write was lost")
	assert.Nil(t, res.Taken)
	assert.Empty(t, events)

	unreachable := func() (*rest.Config, error) {
		cfg, err := reach()
		cfg.Host = "https://127.0.0.1:1"
		return cfg, err
	}
	require.True(t, r.Start(ctx, "kcp/other-etcd", Request{Scheduled: t0, Agent: unreachable, Done: func() { done <- struct{}{} }}))
	<-done
	res, events, _ = r.Last("kcp/other-etcd")
	require.Error(t, res.Err)
	require.Len(t, events, 1)
	assert.Equal(t, "SnapshotFailed", events[0].Reason)
	assert.False(t, r.Start(ctx, "kcp/other-etcd", Request{Scheduled: t0, Agent: reach}), "a failed take waits RetryAfter")
	r.now = func() time.Time { return time.Now().Add(RetryAfter) }
	assert.True(t, r.Start(ctx, "kcp/other-etcd", Request{Scheduled: t0, Agent: reach, Done: func() { done <- struct{}{} }}))
	<-done
	r.Wait()
}
