package framework

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"strconv"
	"time"
)

// StandIn is a second kube-apiserver that stands in for a kcp shard, because kcp itself
// cannot be built here: it serves with a shard's realized serving certificate and trusts the
// realized client CA bundle, so that a credential minted for the shard can be tried for real
// (`kubectl auth whoami`).
type StandIn struct {
	// URL is where it serves, on loopback.
	URL  string
	proc *process
}

// StandInOptions are what a stand-in serves and trusts.
type StandInOptions struct {
	// Name names its files, its log and its etcd prefix.
	Name string
	// ServingCert and ServingKey are the shard's serving certificate (with its chain) and key.
	ServingCert, ServingKey []byte
	// ClientCA is the bundle of CAs whose client certificates it accepts.
	ClientCA []byte
	// ServerCA verifies its serving certificate, to wait for it.
	ServerCA []byte
	// ServerName is a name of the serving certificate, to wait for it.
	ServerName string
}

// StartStandIn starts a stand-in on the stack's etcd, under a prefix of its own, and returns
// once it is ready. Stop it with Stop; the stack's Stop stops it too.
func (s *Stack) StartStandIn(ctx context.Context, o StandInOptions) (*StandIn, error) {
	dir := s.path("standin-" + o.Name)
	files := map[string][]byte{dir + "/tls.crt": o.ServingCert, dir + "/tls.key": o.ServingKey, dir + "/client-ca.crt": o.ClientCA}
	if err := writeFiles(files); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p, err := startProcess(s.path("logs"), "standin-"+o.Name, s.bin("kube-apiserver"),
		"--etcd-servers="+s.EtcdURL, "--etcd-prefix=/standin-"+o.Name,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--endpoint-reconciler-type=none",
		"--tls-cert-file="+dir+"/tls.crt", "--tls-private-key-file="+dir+"/tls.key",
		"--client-ca-file="+dir+"/client-ca.crt",
		"--service-account-key-file="+s.pki.serviceAccountKey,
		"--service-account-signing-key-file="+s.pki.serviceAccountKey,
		"--service-account-issuer=https://standin.invalid",
		"--service-cluster-ip-range=10.97.0.0/16",
		"--authorization-mode=RBAC",
	)
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, p)
	in := &StandIn{URL: "https://127.0.0.1:" + strconv.Itoa(port), proc: p}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(o.ServerCA) {
		in.Stop()
		return nil, errors.New("the stand-in's server CA has no certificate")
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: o.ServerName, MinVersion: tls.VersionTLS12}}}
	// /readyz is public: it answers anonymous requests once the stand-in is ready.
	if err := poll(ctx, "the kcp stand-in to be ready", 2*time.Minute, []*process{p}, func(ctx context.Context) (bool, error) {
		return httpOK(ctx, client, in.URL+"/readyz")
	}); err != nil {
		in.Stop()
		return nil, err
	}
	return in, nil
}

// Stop stops the stand-in.
func (in *StandIn) Stop() { in.proc.stop() }
