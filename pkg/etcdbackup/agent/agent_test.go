package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/kcp-setups/apiserver/internal/localstack"
	"github.com/kcp-setups/apiserver/pkg/embeddedetcd"
	"github.com/kcp-setups/apiserver/pkg/embeddedetcd/etcdtest"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup"
)

// keys is how many keys the member holds: a few thousand, as the issue's story says.
const keys = 3000

// member runs a real etcd member (embedded, TLS) with keys keys, and answers the agent's
// TLS toward it and a client.
func member(t *testing.T) (*embeddedetcd.Server, *tls.Config, *clientv3.Client) {
	t.Helper()
	srv, cfg, c := etcdtest.Member(t)
	for i := range keys {
		_, err := c.Put(t.Context(), fmt.Sprintf("/registry/key-%05d", i), fmt.Sprintf("value-%05d", i))
		require.NoError(t, err)
	}
	return srv, cfg, c
}

// agentPKI is the RootShard's etcd client CA as the agent sees it: the agent's serving
// certificate and a client's, both of it, and a client certificate of another CA.
type agentPKI struct {
	pool                     *x509.CertPool
	serving, client, foreign tls.Certificate
}

func newAgentPKI(t *testing.T) agentPKI {
	t.Helper()
	dir := t.TempDir()
	ca, err := localstack.LoadOrCreateCA(dir, "etcd-client-ca")
	require.NoError(t, err)
	other, err := localstack.LoadOrCreateCA(dir, "other-etcd-client-ca")
	require.NoError(t, err)
	pair := func(ca *localstack.CA, name string, usages ...x509.ExtKeyUsage) tls.Certificate {
		kp, err := ca.Issue(dir, name, localstack.CertSpec{CommonName: name, DNSNames: []string{"localhost", "example.com"}, Usages: usages})
		require.NoError(t, err)
		c, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
		require.NoError(t, err)
		return c
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return agentPKI{
		pool:    pool,
		serving: pair(ca, "root-etcd-backup", x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth),
		client:  pair(ca, "root-kcp", x509.ExtKeyUsageClientAuth),
		foreign: pair(other, "other-kcp", x509.ExtKeyUsageClientAuth),
	}
}

// serve runs the agent's API over mutual TLS, as `etcd-agent serve` does.
func serve(t *testing.T, s *Server, p agentPKI) string {
	t.Helper()
	ts := httptest.NewUnstartedServer(s.Handler())
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{p.serving}, ClientCAs: p.pool, ClientAuth: tls.RequireAndVerifyClientCert}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return ts.URL
}

func clientWith(p agentPKI, url string, certs ...tls.Certificate) Client {
	return Client{URL: url, HTTP: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: certs, RootCAs: p.pool, ServerName: "localhost"}}}}
}

// TestTakeVerifyAndRestore is the agent's story on a real member: a snapshot on demand,
// listed, verified, served; restored into a new member's empty data directory, which starts
// with every key and a revision moved past the snapshot's; a data directory with data is
// left alone; a corrupted snapshot is refused, and nothing is restored from it.
func TestTakeVerifyAndRestore(t *testing.T) {
	srv, memberTLS, c := member(t)
	p := newAgentPKI(t)
	store, err := etcdbackup.NewDirStore(filepath.Join(t.TempDir(), "snapshots"))
	require.NoError(t, err)
	url := serve(t, &Server{Store: store, Endpoints: []string{srv.ClientURL}, TLS: memberTLS, Base: "root", Retention: 2}, p)
	client := clientWith(p, url, p.client)

	head, err := c.Get(t.Context(), "/registry/key-00000")
	require.NoError(t, err)
	snap, err := client.Take(t.Context(), "")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(snap.Name, "root-"), snap.Name)
	assert.Equal(t, head.Header.Revision, snap.Revision)
	assert.Equal(t, srv.ClientURL, snap.Member, "a cluster of one gives its snapshot from its leader")
	assert.Len(t, snap.SHA256, 64)

	listed, err := client.List(t.Context())
	require.NoError(t, err)
	require.Len(t, listed, 1)
	assert.Equal(t, snap.Name, listed[0].Name)
	assert.Equal(t, snap.Size, listed[0].Size)

	v, err := client.Verify(t.Context(), snap.Name)
	require.NoError(t, err)
	assert.Equal(t, snap.SHA256, v.SHA256)

	// Retention 2: a third snapshot deletes the first.
	second, err := client.Take(t.Context(), "")
	require.NoError(t, err)
	third, err := client.Take(t.Context(), "")
	require.NoError(t, err)
	assert.Equal(t, []string{snap.Name}, third.Deleted)
	listed, err = client.List(t.Context())
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{second.Name, third.Name}, []string{listed[0].Name, listed[1].Name})

	// The restore of a new member, from the agent, as a member's init container does it.
	dataDir := filepath.Join(t.TempDir(), "member", "data")
	require.NoError(t, os.MkdirAll(dataDir, 0o700), "an empty data directory, as a new volume's")
	peerPort, err := localstack.FreePort()
	require.NoError(t, err)
	clientPort, err := localstack.FreePort()
	require.NoError(t, err)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	cfg := RestoreConfig{DataDir: dataDir, Name: "restored-0", PeerURL: peerURL, InitialCluster: "restored-0=" + peerURL, InitialClusterToken: "t"}
	open := func(ctx context.Context) (io.ReadCloser, error) { return client.Open(ctx, third.Name) }
	restored, err := Restore(t.Context(), open, cfg)
	require.NoError(t, err)
	assert.True(t, restored)

	again, err := Restore(t.Context(), open, cfg)
	require.NoError(t, err)
	assert.False(t, again, "a data directory with data is never replaced")

	rc := startRestored(t, cfg, clientPort)
	got, err := rc.Get(t.Context(), "/registry/", clientv3.WithPrefix())
	require.NoError(t, err)
	require.Len(t, got.Kvs, keys, "every key is back")
	for i, kv := range got.Kvs {
		assert.Equal(t, fmt.Sprintf("/registry/key-%05d", i), string(kv.Key))
		assert.Equal(t, fmt.Sprintf("value-%05d", i), string(kv.Value))
	}
	assert.GreaterOrEqual(t, got.Header.Revision, third.Revision+RevisionBump, "the revision moves past the snapshot's")
	_, err = rc.Get(t.Context(), "/registry/key-00000", clientv3.WithRev(third.Revision))
	assert.Error(t, err, "the snapshot's revisions are compacted: a watch from before the loss relists")

	// A snapshot corrupted in the store: the agent's check and the restore refuse it.
	path := filepath.Join(store.Dir, second.Name)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[len(data)/3] ^= 0xff
	require.NoError(t, os.WriteFile(path, data, 0o600))
	_, err = client.Verify(t.Context(), second.Name)
	assert.ErrorIs(t, err, etcdbackup.ErrCorrupt)
	otherDir := filepath.Join(t.TempDir(), "other", "data")
	_, err = Restore(t.Context(), func(ctx context.Context) (io.ReadCloser, error) { return client.Open(ctx, second.Name) },
		RestoreConfig{DataDir: otherDir, Name: "x", PeerURL: peerURL, InitialCluster: "x=" + peerURL})
	assert.ErrorIs(t, err, etcdbackup.ErrCorrupt)
	_, statErr := os.Stat(otherDir)
	assert.True(t, errors.Is(statErr, os.ErrNotExist), "nothing is restored from a corrupted snapshot")

	_, err = client.Verify(t.Context(), "root-20200101-000000")
	assert.ErrorIs(t, err, etcdbackup.ErrNotFound)
}

// startRestored starts a member on a restored data directory and answers a client of it.
func startRestored(t *testing.T, r RestoreConfig, clientPort int) *clientv3.Client {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Name = r.Name
	cfg.Dir = r.DataDir
	cfg.Logger, cfg.LogLevel = "zap", "error"
	peer, err := url.Parse(r.PeerURL)
	require.NoError(t, err)
	client, err := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", clientPort))
	require.NoError(t, err)
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
	cfg.InitialCluster = r.InitialCluster
	cfg.InitialClusterToken = r.InitialClusterToken
	e, err := embed.StartEtcd(cfg)
	require.NoError(t, err)
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		t.Fatal("the restored member did not start")
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{client.String()}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestOnlyTheRootShardsEtcdClientCAPasses: the agent answers nobody without a certificate of
// its trusted CA (another RootShard's is refused at the handshake), and its answers'
// errors say what happened.
func TestOnlyTheRootShardsEtcdClientCAPasses(t *testing.T) {
	p := newAgentPKI(t)
	store, err := etcdbackup.NewDirStore(filepath.Join(t.TempDir(), "snapshots"))
	require.NoError(t, err)
	url := serve(t, &Server{Store: store, Base: "root", Retention: 1}, p)
	for name, client := range map[string]Client{
		"no certificate":         clientWith(p, url),
		"another RootShard's CA": clientWith(p, url, p.foreign),
	} {
		_, err := client.List(t.Context())
		assert.Error(t, err, name)
	}
	listed, err := clientWith(p, url, p.client).List(t.Context())
	require.NoError(t, err)
	assert.Empty(t, listed)
	_, err = clientWith(p, url, p.client).Open(t.Context(), "../etc")
	assert.Error(t, err, "a name that leaves the store")
}

// blockingStore holds Put until released, so that a second snapshot finds the first under way.
type blockingStore struct {
	etcdbackup.DirStore
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blockingStore) Put(ctx context.Context, name string, r io.Reader) (int64, error) {
	b.once.Do(func() { close(b.started) })
	<-b.release
	return b.DirStore.Put(ctx, name, r)
}

// TestOneSnapshotAtATime: a snapshot asked for while one is taken is a 409, not a second
// read of the database.
func TestOneSnapshotAtATime(t *testing.T) {
	srv, memberTLS, _ := member(t)
	p := newAgentPKI(t)
	dir, err := etcdbackup.NewDirStore(filepath.Join(t.TempDir(), "snapshots"))
	require.NoError(t, err)
	store := &blockingStore{DirStore: dir, started: make(chan struct{}), release: make(chan struct{})}
	url := serve(t, &Server{Store: store, Endpoints: []string{srv.ClientURL}, TLS: memberTLS, Base: "root", Retention: 3}, p)
	client := clientWith(p, url, p.client)
	first := make(chan error, 1)
	go func() { _, err := client.Take(context.Background(), ""); first <- err }()
	<-store.started
	_, err = client.Take(t.Context(), "")
	assert.ErrorIs(t, err, ErrBusy)
	close(store.release)
	require.NoError(t, <-first)
	_, err = client.Take(t.Context(), "")
	assert.NoError(t, err, "the next one, once the first is done")
}

// TestASnapshotUnderAGivenName: a snapshot asked for under a name of the agent's base is
// taken under it (the name an on-demand request answered before it was taken); a second
// under that name is a 409 that says so (not "busy"), and a name of another base, or no
// snapshot name at all, is a 400 that takes nothing.
func TestASnapshotUnderAGivenName(t *testing.T) {
	srv, memberTLS, _ := etcdtest.Member(t)
	p := newAgentPKI(t)
	store, err := etcdbackup.NewDirStore(filepath.Join(t.TempDir(), "snapshots"))
	require.NoError(t, err)
	url := serve(t, &Server{Store: store, Endpoints: []string{srv.ClientURL}, TLS: memberTLS, Base: "root", Retention: 3}, p)
	client := clientWith(p, url, p.client)

	snap, err := client.Take(t.Context(), "root-20261128-101500")
	require.NoError(t, err)
	assert.Equal(t, "root-20261128-101500", snap.Name)
	assert.Len(t, snap.SHA256, 64)
	v, err := client.Verify(t.Context(), snap.Name)
	require.NoError(t, err)
	assert.Equal(t, snap.SHA256, v.SHA256, "verified in the store under its name")

	_, err = client.Take(t.Context(), "root-20261128-101500")
	assert.ErrorIs(t, err, etcdbackup.ErrExists)
	assert.NotErrorIs(t, err, ErrBusy)

	for _, name := range []string{"other-20261128-101500", "root-latest", "../root-20261128-101500"} {
		_, err = client.Take(t.Context(), name)
		assert.ErrorContains(t, err, "answered 400", name)
	}
	listed, err := client.List(t.Context())
	require.NoError(t, err)
	require.Len(t, listed, 1, "nothing else was taken")
	assert.Equal(t, snap.Name, listed[0].Name)
}
