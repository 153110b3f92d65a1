package kcpclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// requestTimeout bounds one request to kcp: an unreachable or slow kcp fails the call, it
// never holds a worker.
const requestTimeout = 15 * time.Second

// RootShardEndpoint is where rs's kcp server is reached.
func RootShardEndpoint(rs *operatorv1alpha1.RootShard) Endpoint {
	return Endpoint{Namespace: rs.Namespace, Service: pki.RootShardServiceName(rs.Name), Port: pki.KcpSecurePort,
		Selector: pki.KcpSelector(pki.RootShardKind, rs.Name), ClusterDomain: clusterDomain(rs.Spec.ClusterDomain)}
}

// ShardEndpoint is where sh's kcp server is reached: its Service, whatever URL the shard
// announces.
func ShardEndpoint(sh *operatorv1alpha1.Shard) Endpoint {
	return Endpoint{Namespace: sh.Namespace, Service: pki.ShardServiceName(sh.Name), Port: pki.KcpSecurePort,
		Selector: pki.KcpSelector(pki.ShardKind, sh.Name), ClusterDomain: clusterDomain(sh.Spec.ClusterDomain)}
}

// RootShardProxyEndpoint is where rs's internal front proxy is reached.
func RootShardProxyEndpoint(rs *operatorv1alpha1.RootShard) Endpoint {
	return Endpoint{Namespace: rs.Namespace, Service: pki.RootShardProxyServiceName(rs.Name), Port: pki.KcpSecurePort,
		Selector: pki.RootShardProxySelector(rs.Name), ClusterDomain: rs.Spec.ClusterDomain}
}

// clusterDomain is the host cluster's DNS domain a spec names, or the default.
func clusterDomain(d string) string {
	if d == "" {
		return operatorv1alpha1.DefaultClusterDomain
	}
	return d
}

// NotReadyError says that the server cannot talk to a kcp yet: its identity or the CA that
// verifies kcp is not issued. It is no failure of kcp's.
type NotReadyError struct{ Reason string }

func (e *NotReadyError) Error() string { return e.Reason }

// Clients builds clients for the kcp servers of RootShards and Shards, and for the internal
// front proxies of RootShards, that authenticate as
// the server's own identity (pki.OperatorSecretName) and verify kcp with the CA that
// issued the serving certificate of the server they dial. Transports are kept per endpoint
// and credentials, so that connections are reused and a rotated certificate takes a new
// one.
type Clients struct {
	dialer Dialer
	// etcdDialer reaches the managed etcds' members (Etcd); dialer unless WithEtcdDialer.
	etcdDialer Dialer
	secrets    corev1listers.SecretLister

	mu         sync.Mutex
	transports map[string]http.RoundTripper
}

// NewClients returns clients that dial with dialer and read the credentials from secrets.
func NewClients(dialer Dialer, secrets corev1listers.SecretLister) *Clients {
	return &Clients{dialer: dialer, etcdDialer: dialer, secrets: secrets, transports: map[string]http.RoundTripper{}}
}

// WithEtcdDialer makes Etcd dial the managed etcds' members with d (--etcd-dialer), and
// returns c.
func (c *Clients) WithEtcdDialer(d Dialer) *Clients {
	c.etcdDialer = d
	return c
}

// RootShard returns a client config for workspace (the server's base when empty) on rs's
// kcp server.
func (c *Clients) RootShard(rs *operatorv1alpha1.RootShard, workspace string) (*rest.Config, error) {
	return c.config(rs, RootShardEndpoint(rs), pki.ServerSecretName(rs.Name), workspace)
}

// RootShardProxy returns a client config for workspace (the proxy's base when empty)
// through rs's internal front proxy, which reaches the workspace
// on whichever shard hosts it. A shard answers a workspace that another shard hosts with
// "Not found on this shard": what is addressed by workspace goes through the proxy.
func (c *Clients) RootShardProxy(rs *operatorv1alpha1.RootShard, workspace string) (*rest.Config, error) {
	return c.config(rs, RootShardProxyEndpoint(rs), pki.RootShardProxyServerSecretName(rs.Name), workspace)
}

// Shard returns a client config for workspace (the server's base when empty) on the kcp
// server of sh, a shard of rs.
func (c *Clients) Shard(sh *operatorv1alpha1.Shard, rs *operatorv1alpha1.RootShard, workspace string) (*rest.Config, error) {
	return c.config(rs, ShardEndpoint(sh), pki.ServerSecretName(sh.Name), workspace)
}

// config is a client config for workspace on ep as the server's identity toward rs, trusting
// the CA in the ca.crt of serverSecret, the serving certificate's Secret of ep.
func (c *Clients) config(rs *operatorv1alpha1.RootShard, ep Endpoint, serverSecret, workspace string) (*rest.Config, error) {
	identity, err := c.secret(rs.Namespace, pki.OperatorSecretName(rs.Name), corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
	if err != nil {
		return nil, err
	}
	server, err := c.secret(ep.Namespace, serverSecret, corev1.ServiceAccountRootCAKey)
	if err != nil {
		return nil, err
	}
	host := ep.URL()
	if workspace != "" {
		host += "/clusters/" + workspace
	}
	return c.restConfig(c.dialer, ep, host, identity, server)
}

// restConfig is a client config for host on ep through dialer, presenting the client
// certificate of identity and verifying the server with the ca.crt of trust.
func (c *Clients) restConfig(dialer Dialer, ep Endpoint, host string, identity, trust *corev1.Secret) (*rest.Config, error) {
	rt, err := c.transport(dialer, ep, rest.TLSClientConfig{
		ServerName: ep.ServerName(),
		CertData:   identity.Data[corev1.TLSCertKey],
		KeyData:    identity.Data[corev1.TLSPrivateKeyKey],
		CAData:     trust.Data[corev1.ServiceAccountRootCAKey],
	})
	if err != nil {
		return nil, err
	}
	return &rest.Config{Host: host, Transport: rt, Timeout: requestTimeout, UserAgent: "kcp-setups"}, nil
}

// secret returns a Secret of the server's that must hold keys.
func (c *Clients) secret(namespace, name string, keys ...string) (*corev1.Secret, error) {
	s, err := c.secrets.Secrets(namespace).Get(name)
	if errors.IsNotFound(err) {
		return nil, &NotReadyError{Reason: fmt.Sprintf("Secret %s/%s is not issued yet", namespace, name)}
	}
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if len(s.Data[k]) == 0 {
			return nil, &NotReadyError{Reason: fmt.Sprintf("Secret %s/%s has no %s yet", namespace, name, k)}
		}
	}
	return s, nil
}

// transport is the cached transport of ep with tls through dialer; a new one replaces it
// when the credentials change.
func (c *Clients) transport(dialer Dialer, ep Endpoint, tls rest.TLSClientConfig) (http.RoundTripper, error) {
	h := sha256.New()
	for _, b := range [][]byte{tls.CertData, tls.KeyData, tls.CAData} {
		h.Write(b)
		h.Write([]byte{0})
	}
	key, sum := ep.URL(), hex.EncodeToString(h.Sum(nil))
	c.mu.Lock()
	defer c.mu.Unlock()
	if rt, ok := c.transports[key+"\x00"+sum]; ok {
		return rt, nil
	}
	rt, err := rest.TransportFor(&rest.Config{Host: ep.URL(), TLSClientConfig: tls,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) { return dialer.Dial(ctx, ep) }})
	if err != nil {
		return nil, err
	}
	// Only the current credentials' transport is kept per endpoint.
	for k, old := range c.transports {
		if len(k) > len(key) && k[:len(key)+1] == key+"\x00" {
			if t, ok := old.(interface{ CloseIdleConnections() }); ok {
				t.CloseIdleConnections()
			}
			delete(c.transports, k)
		}
	}
	c.transports[key+"\x00"+sum] = rt
	return rt, nil
}

// Etcd returns a client config for a managed etcd's client endpoint ep, authenticating with
// the client certificate in clientSecret (kcp's own, issued by the etcd client CA) and
// verifying etcd with its ca.crt, the root of that certificate's chain, to which the members'
// serving certificate chains too. Only the controllers use it, to ask etcd's /health; the
// key never leaves the server.
func (c *Clients) Etcd(ep Endpoint, clientSecret string) (*rest.Config, error) {
	s, err := c.secret(ep.Namespace, clientSecret, corev1.TLSCertKey, corev1.TLSPrivateKeyKey, corev1.ServiceAccountRootCAKey)
	if err != nil {
		return nil, err
	}
	return c.restConfig(c.etcdDialer, ep, ep.URL(), s, s)
}
