package integration

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/kcp-setups/apiserver/cmd/apiserver/app"
	"github.com/kcp-setups/apiserver/pkg/embeddedetcd"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
)

// testServer is the real kcp-setups server running in this process on an embedded etcd.
type testServer struct {
	config *rest.Config
	client clientset.Interface
	stop   func()
}

// storage configures where a test server keeps its objects.
type storage func(*app.Options)

// embedded keeps the objects in the server's embedded etcd, with its data in dir.
func embedded(dir string) storage {
	return func(o *app.Options) { o.EmbeddedEtcdDir = dir }
}

// external keeps the objects in an etcd started apart from the server, which stands in for
// an etcd cluster, as --etcd-servers, --etcd-certfile, --etcd-keyfile and --etcd-cafile do:
// the member takes only clients with its client certificate.
func external(etcd *embeddedetcd.Server) storage {
	return func(o *app.Options) { etcd.ApplyTo(&o.RecommendedOptions.Etcd.StorageConfig.Transport) }
}

// rawEtcd is an etcd client of the member with the server's own client certificate.
func rawEtcd(t *testing.T, etcd *embeddedetcd.Server) *clientv3.Client {
	t.Helper()
	cfg, err := etcd.Client.TLSConfig()
	require.NoError(t, err)
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd.ClientURL}, TLS: cfg, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// startServer starts the server on the given storage and waits until it is ready. This tier has no kube-apiserver to delegate to, so authentication, authorization
// and admission are off, as the library allows; everything else is the production path.
func startServer(t *testing.T, store storage, configure ...func(*app.Options)) *testServer {
	t.Helper()

	listener, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	certDir := t.TempDir()

	o := app.NewOptions()
	store(o)
	for _, c := range configure {
		c(o)
	}
	o.RecommendedOptions.SecureServing.Listener = listener
	o.RecommendedOptions.SecureServing.BindPort = listener.Addr().(*net.TCPAddr).Port
	o.RecommendedOptions.SecureServing.BindAddress = net.ParseIP("127.0.0.1")
	o.RecommendedOptions.SecureServing.ServerCert.CertDirectory = certDir
	o.RecommendedOptions.Authentication = nil
	o.RecommendedOptions.Authorization = nil
	o.RecommendedOptions.CoreAPI = nil
	o.RecommendedOptions.Admission = nil
	o.RecommendedOptions.Features.EnablePriorityAndFairness = false

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()

	stop := func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("server stopped with an error: %v", err)
			}
		case <-time.After(time.Minute):
			t.Errorf("server did not stop within a minute")
		}
	}

	// Without a given certificate, the serving certificate is self-signed into certDir; its
	// file holds the CA too.
	certFile := o.RecommendedOptions.SecureServing.ServerCert.CertKey.CertFile
	if certFile == "" {
		certFile = filepath.Join(certDir, "apiserver.crt")
	}
	var caData []byte
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		select {
		case err := <-done:
			return false, err
		default:
		}
		if caData == nil {
			data, err := os.ReadFile(certFile)
			if err != nil {
				return false, nil
			}
			caData = data
		}
		cfg := &rest.Config{Host: "https://" + listener.Addr().String(), TLSClientConfig: rest.TLSClientConfig{CAData: caData}}
		client, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return false, err
		}
		resp, err := client.Get(cfg.Host + "/readyz")
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		stop()
		require.NoError(t, err, "server did not become ready")
	}

	config := &rest.Config{
		Host:            "https://" + listener.Addr().String(),
		TLSClientConfig: rest.TLSClientConfig{CAData: caData},
		QPS:             -1,
	}
	client, err := clientset.NewForConfig(config)
	require.NoError(t, err)
	return &testServer{config: config, client: client, stop: stop}
}

// eventTimeout bounds how long a test waits for a watch event; it is not a speed assertion.
const eventTimeout = 30 * time.Second

func timeout() <-chan time.Time { return time.After(eventTimeout) }
