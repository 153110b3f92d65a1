// Package embeddedetcd runs a single etcd member inside the server's process, for a server
// started without --etcd-servers. It listens on loopback only, keeps its data in a directory
// so that objects survive a restart, and shuts down cleanly.
//
// Only the server gets in: both the client and the peer listener speak TLS and require a
// client certificate signed by a CA of the member's own, which lives in the data directory
// (pki/, every file 0600) and whose key is never written down. Another process on the
// host or in the pod, root included, reaches the port but not the data: it has no certificate.
// A unix socket would not do this, as root ignores its mode.
package embeddedetcd

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/tlsutil"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/klog/v2"
)

// startTimeout bounds how long a member may take to become ready, including WAL replay.
const startTimeout = 2 * time.Minute

// Server is a running embedded etcd member.
type Server struct {
	etcd    *embed.Etcd
	lock    *dirLock
	closing *atomic.Bool
	// ClientURL is the URL clients reach the member at, https on loopback.
	ClientURL string
	// PeerURL is the member's peer listener, https on loopback with client certificates
	// required like ClientURL; a single member never dials it.
	PeerURL string
	// Client is the only way in: the client certificate and the CA of the serving one.
	Client Credentials
}

// ApplyTo points an API server's etcd transport at the member, with its client certificate.
func (s *Server) ApplyTo(t *storagebackend.TransportConfig) {
	t.ServerList = []string{s.ClientURL}
	t.CertFile, t.KeyFile, t.TrustedCAFile = s.Client.CertFile, s.Client.KeyFile, s.Client.CAFile
}

// Start runs a member with its data in dir and returns once it serves clients. It fails at
// once, with ErrDirInUse, when another running server holds dir.
func Start(ctx context.Context, dir string) (*Server, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the embedded etcd directory: %w", err)
	}
	// etcd refuses a data directory that others can read.
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("securing the embedded etcd directory: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	s, err := start(ctx, dir)
	if err != nil {
		_ = lock.release()
		return nil, err
	}
	s.lock = lock
	return s, nil
}

// start runs a member in dir, which the caller holds.
func start(ctx context.Context, dir string) (*Server, error) {
	logger := klog.FromContext(ctx).WithName("embedded-etcd")

	certs, err := ensurePKI(dir)
	if err != nil {
		return nil, err
	}
	ports, err := freeLoopbackPorts(2)
	if err != nil {
		return nil, err
	}
	clientURL := url.URL{Scheme: "https", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))}
	peerURL := url.URL{Scheme: "https", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))}

	cfg := embed.NewConfig()
	cfg.Name = "kcp-setups"
	cfg.Dir = dir
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// Both listeners require a client certificate of the member's CA (ClientCertAuth with a
	// TrustedCAFile is tls.RequireAndVerifyClientCert), and speak TLS 1.3 only. The client
	// listener admits the server's certificate alone; the peer listener, which a single
	// member never dials, the member's own alone.
	serving := func(allowedCN string) transport.TLSInfo {
		return transport.TLSInfo{
			CertFile:       certs.path(serverCertFile),
			KeyFile:        certs.path(serverKeyFile),
			TrustedCAFile:  certs.path(caCertFile),
			ClientCertAuth: true,
			AllowedCNs:     []string{allowedCN},
		}
	}
	cfg.ClientTLSInfo = serving(clientCN)
	cfg.PeerTLSInfo = serving(memberCN)
	cfg.TlsMinVersion = string(tlsutil.TLSVersion13)
	// The HTTP gateway to the gRPC API would be one more way in; the server speaks gRPC.
	cfg.EnableGRPCGateway = false
	// No metrics or pprof listeners of its own: the server's /metrics is the one to scrape.
	cfg.ListenMetricsUrls = nil
	closing := &atomic.Bool{}
	zapLogger, err := zap.NewProduction(zap.IncreaseLevel(zapcore.WarnLevel), zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return quietWhileClosing{Core: c, closing: closing}
	}))
	if err != nil {
		return nil, fmt.Errorf("setting up the embedded etcd logger: %w", err)
	}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zapLogger)

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting embedded etcd in %s: %w", dir, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd failed: %w", err)
	case <-time.After(startTimeout):
		e.Close()
		return nil, fmt.Errorf("embedded etcd in %s did not become ready within %s", dir, startTimeout)
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	}
	// Paths only: the certificates and keys themselves are never logged.
	logger.Info("Embedded etcd is serving, to clients with its client certificate only", "dir", dir, "url", clientURL.String(), "certificates", certs.dir)
	return &Server{etcd: e, closing: closing, ClientURL: clientURL.String(), PeerURL: peerURL.String(), Client: certs.client()}, nil
}

// Close stops the member, waits until its data is flushed, and only then lets another
// server take the directory.
func (s *Server) Close() {
	s.closing.Store(true)
	s.etcd.Close()
	if err := s.lock.release(); err != nil {
		klog.Background().Error(err, "Releasing the embedded etcd directory")
	}
}

// quietWhileClosing drops what etcd logs while it closes: its listeners report their own
// closing as errors ("mux: server closed"), which would make every clean shutdown look failed.
type quietWhileClosing struct {
	zapcore.Core
	closing *atomic.Bool
}

func (q quietWhileClosing) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if q.closing.Load() && e.Level < zapcore.FatalLevel {
		return ce
	}
	return q.Core.Check(e, ce)
}

func (q quietWhileClosing) With(fields []zapcore.Field) zapcore.Core {
	return quietWhileClosing{Core: q.Core.With(fields), closing: q.closing}
}

// freeLoopbackPorts asks the kernel for n unused loopback ports. etcd must be given concrete
// ports, because the member's URLs are part of its cluster configuration.
func freeLoopbackPorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port for embedded etcd: %w", err)
		}
		defer func() { _ = l.Close() }()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
