package framework

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	certutil "k8s.io/client-go/util/cert"

	"github.com/kcp-setups/apiserver/internal/localstack"
)

// StandIn is a second kube-apiserver that stands in for a kcp shard, because kcp itself
// cannot be built here: it serves with a shard's realized serving certificate and trusts the
// realized client CA bundle, so that a credential minted for the shard can be tried for real
// (`kubectl auth whoami`). KcpDouble puts kcp's workspace paths and Shard API in front of
// the same kind of server.
type StandIn struct {
	// URL is where it serves, on loopback.
	URL  string
	proc *localstack.Process
	// dir holds its files, which Refresh rewrites.
	dir string
}

// StandInOptions are what a stand-in serves and trusts: the realized PKI of a RootShard or
// Shard.
type StandInOptions struct {
	// Name names its files, its log and its etcd prefix.
	Name string
	// ServingCert and ServingKey are the shard's serving certificate (with its chain) and key,
	// such as the tls.crt and tls.key of the Secret <rootshard>-server.
	ServingCert, ServingKey []byte
	// ClientCA is the bundle of CAs whose client certificates it accepts, such as the
	// tls.crt of <rootshard>-merged-client-ca.
	ClientCA []byte
	// ServerCA verifies ServingCert, such as the tls.crt of <rootshard>-merged-ca-bundle;
	// ServerName is a DNS name of ServingCert ("localhost" for a RootShard's).
	ServerCA   []byte
	ServerName string
}

// StartStandIn starts a stand-in on the stack's etcd, under a prefix of its own, and returns
// once it is ready. Stop it with Stop; the stack's Stop stops it too.
func (s *Stack) StartStandIn(ctx context.Context, o StandInOptions) (*StandIn, error) {
	// A serving certificate the server CA does not verify would only show as a readiness
	// timeout two minutes later: say at once which certificates do not match.
	if err := o.VerifyServing(); err != nil {
		return nil, fmt.Errorf("stand-in %s: %w", o.Name, err)
	}
	dir := s.Path("standin-" + o.Name)
	files := map[string][]byte{dir + "/tls.crt": o.ServingCert, dir + "/tls.key": o.ServingKey, dir + "/client-ca.crt": o.ClientCA}
	if err := localstack.WriteFiles(files); err != nil {
		return nil, err
	}
	port, err := localstack.FreePort()
	if err != nil {
		return nil, err
	}
	p, err := s.startShardAPIServer(ctx, shardAPIServer{
		name: "standin-" + o.Name, port: port,
		servingCert: dir + "/tls.crt", servingKey: dir + "/tls.key", clientCA: dir + "/client-ca.crt",
		serverCA: o.ServerCA, serverName: o.ServerName,
	})
	if err != nil {
		return nil, err
	}
	return &StandIn{URL: "https://127.0.0.1:" + strconv.Itoa(port), proc: p, dir: dir}, nil
}

// Stop stops the stand-in.
func (in *StandIn) Stop() { in.proc.Stop() }

// shardAPIServer is a kube-apiserver on the stack's etcd, under a prefix of its own, that
// stands in for a kcp shard: how it serves, whom it trusts, and how to tell it is ready.
type shardAPIServer struct {
	// name names its log and its etcd prefix.
	name string
	port int
	// servingCert, servingKey and clientCA are files.
	servingCert, servingKey, clientCA string
	// extraArgs are added to the flags every such server has.
	extraArgs []string
	// serverCA and serverName verify its serving certificate, to wait for /readyz.
	serverCA   []byte
	serverName string
}

// url is where the server serves.
func (a shardAPIServer) url() string { return "https://127.0.0.1:" + strconv.Itoa(a.port) }

// startShardAPIServer starts the server, remembers it for the stack's Stop, and returns
// once it is ready.
func (s *Stack) startShardAPIServer(ctx context.Context, a shardAPIServer) (*localstack.Process, error) {
	args := append([]string{
		"--etcd-servers=" + s.EtcdURL, "--etcd-prefix=/" + a.name,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port=" + strconv.Itoa(a.port),
		"--endpoint-reconciler-type=none",
		"--tls-cert-file=" + a.servingCert, "--tls-private-key-file=" + a.servingKey,
		"--client-ca-file=" + a.clientCA,
		"--service-account-key-file=" + s.ServiceAccountKeyFile(),
		"--service-account-signing-key-file=" + s.ServiceAccountKeyFile(),
		"--service-account-issuer=https://standin.invalid",
		"--service-cluster-ip-range=10.97.0.0/16",
		"--authorization-mode=RBAC",
	}, a.extraArgs...)
	p, err := localstack.StartProcess(s.Path("logs"), a.name, s.Bin("kube-apiserver"), args...)
	if err != nil {
		return nil, err
	}
	s.Track(nil, p)
	if err := a.waitForReady(ctx, p); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// waitForReady waits until the server, run by p, answers /readyz.
func (a shardAPIServer) waitForReady(ctx context.Context, p *localstack.Process) error {
	return waitForReadyz(ctx, a.name, a.url(), a.serverCA, a.serverName, []*localstack.Process{p})
}

// waitForReadyz waits until what serves /readyz at url with a certificate that serverCA
// verifies for serverName, failing as soon as a watched process exits.
func waitForReadyz(ctx context.Context, what, url string, serverCA []byte, serverName string, watched []*localstack.Process) error {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(serverCA) {
		return errors.New(what + ": the server CA has no certificate")
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12}}}
	// /readyz is public: it answers anonymous requests once the server is ready.
	return localstack.Poll(ctx, what+" to be ready", 2*time.Minute, watched, func(ctx context.Context) (bool, error) {
		return localstack.HTTPOK(ctx, client, url+"/readyz")
	})
}

// VerifyServing checks that ServerCA verifies the serving certificate chain for ServerName,
// and otherwise describes both sides: who issued the certificate, with which key, and when,
// against the CAs of the bundle.
func (o StandInOptions) VerifyServing() error {
	return verifyServing(o.ServingCert, o.ServerCA, o.ServerName)
}

func verifyServing(chain, serverCA []byte, serverName string) error {
	certs, err := certutil.ParseCertsPEM(chain)
	if err != nil || len(certs) == 0 {
		return fmt.Errorf("the serving certificate: %v (%d certificates)", err, len(certs))
	}
	cas, err := certutil.ParseCertsPEM(serverCA)
	if err != nil || len(cas) == 0 {
		return fmt.Errorf("the server CA bundle: %v (%d certificates)", err, len(cas))
	}
	opts := x509.VerifyOptions{DNSName: serverName, Roots: x509.NewCertPool(), Intermediates: x509.NewCertPool()}
	for _, c := range cas {
		opts.Roots.AddCert(c)
	}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := certs[0].Verify(opts); err != nil {
		var b strings.Builder
		fmt.Fprintf(&b, "the serving certificate does not verify: %v\n  chain:", err)
		for _, c := range certs {
			fmt.Fprintf(&b, "\n    %s", describeCertificate(c))
		}
		b.WriteString("\n  server CA bundle:")
		for _, c := range cas {
			fmt.Fprintf(&b, "\n    %s", describeCertificate(c))
		}
		return errors.New(b.String())
	}
	return nil
}

// describeCertificate names a certificate and its issuer by common name and key id, with its
// validity: enough to tell a renewed CA from the one that signed.
func describeCertificate(c *x509.Certificate) string {
	return fmt.Sprintf("CN %q (key %x) issued by CN %q (key %x), valid from %s to %s",
		c.Subject.CommonName, c.SubjectKeyId, c.Issuer.CommonName, c.AuthorityKeyId,
		c.NotBefore.UTC().Format(time.RFC3339), c.NotAfter.UTC().Format(time.RFC3339))
}
