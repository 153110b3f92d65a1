// Package reference builds the reference Secrets: for a RootShard, one per kind of consumer
// (a Shard that joins it, a FrontProxy that serves it, an issuer of Kubeconfigs toward it),
// and for a CacheServer, one for its clients. Each holds exactly what its consumer needs to
// realize itself in another namespace or cluster, and nothing more: a tool outside the
// server copies it there, and the consumer names the copy. Every function is pure.
package reference

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Reference is the kind of a reference Secret: what its holder can realize.
type Reference string

// The reference Secrets.
const (
	// ShardJoin is what a Shard needs to join a RootShard.
	ShardJoin Reference = "shard-join"
	// FrontProxyJoin is what a FrontProxy needs to serve a RootShard's installation.
	FrontProxyJoin Reference = "front-proxy-join"
	// KubeconfigIssuer is what it takes to issue (and mint) user credentials toward a
	// RootShard's installation.
	KubeconfigIssuer Reference = "kubeconfig-issuer"
	// CacheClient is what a root shard or shard needs to use a CacheServer.
	CacheClient Reference = "cache-client"
)

// Label selects the reference Secrets, for sync tools; its value is the Reference.
const Label = pki.LabelReference

// Type is the Secret type of a reference Secret, such as operator.kcp.io/shard-join. A
// consumer refuses a Secret of another type; Kubernetes never changes a Secret's type.
func (r Reference) Type() corev1.SecretType { return corev1.SecretType("operator.kcp.io/" + string(r)) }

// Name is the reference Secret of the owner (a RootShard's or a CacheServer's name).
func (r Reference) Name(owner string) string { return owner + "-" + string(r) }

// The data keys that are not a CA's.
const (
	// RootShardURLKey is the root shard's base URL (in the cluster, unless its
	// spec.shardBaseURL overrides it): shards and front proxies dial it.
	RootShardURLKey = "root-shard-url"
	// ExternalURLKey is the installation's external URL (https://external.hostname:port).
	ExternalURLKey = "external-url"
	// ExternalAdminURLKey is where the external logical-cluster-admin reaches the
	// installation: the private hostname and port when the RootShard has one, else the
	// external URL.
	ExternalAdminURLKey = "external-admin-url"
	// RootCAKey is the RootShard's root CA certificate (its Secret's tls.crt, with the chain
	// above it): the shards trust it, and it ends every chain of the CAs below it.
	RootCAKey = "root-ca.crt"
	// ClientCABundleKey is the client CA bundle every shard and front proxy verifies clients
	// by: the client CA, the front-proxy-client CA and clientCABundleRef (the content of
	// <rs>-merged-client-ca).
	ClientCABundleKey = "client-ca-bundle.crt"
	// ServerCABundleKey verifies the root shard's server: the server CA and caBundleSecretRef
	// (the content of <rs>-merged-ca-bundle).
	ServerCABundleKey = "server-ca-bundle.crt"

	// CacheURLKey is the CacheServer's URL.
	CacheURLKey = "cache-url"
	// CACertKey is the CacheServer's CA certificate alone: it verifies the cache server.
	CACertKey = "ca.crt"
	// ClientCertKey and ClientKeyKey are the client certificate (tls.crt of
	// <cs>-client-certificate) and its key.
	ClientCertKey = corev1.TLSCertKey
	ClientKeyKey  = corev1.TLSPrivateKeyKey
)

// CertKey is the data key of a CA's certificate, such as server-ca.crt: its Secret's tls.crt
// as cert-manager wrote it, chain included, so that a local copy of the CA issues the same
// chains.
func CertKey(ca pki.CA) string { return ca.TemplateKey() + ".crt" }

// KeyKey is the data key of a CA's private key, such as server-ca.key.
func KeyKey(ca pki.CA) string { return ca.TemplateKey() + ".key" }

// TrustKey is the data key of the bundle of a CA's live slots, such as server-ca-trust.crt:
// the CA's certificate alone, or, while the CA rotates (docs/rotation.md), the old and the
// new one, whichever the Issuer signs from. A consumer's pods trust the CA by it. Copies
// made before it existed lack it: the consumer then trusts the CA of the key pair alone.
func TrustKey(ca pki.CA) string { return ca.TemplateKey() + pki.TrustSuffix + ".crt" }

// TrustKeys are the data keys of the bundles of the CAs of KeyPairs, sorted: written with
// every key of Keys, but optional in a copy (TrustKey).
func (r Reference) TrustKeys() []string {
	var keys []string
	for _, ca := range r.KeyPairs() {
		keys = append(keys, TrustKey(ca))
	}
	slices.Sort(keys)
	return keys
}

// KeyPairs are the CAs whose key pairs a reference Secret holds: those that issue its
// consumer's own certificates.
func (r Reference) KeyPairs() []pki.CA {
	switch r {
	case ShardJoin:
		// server, client, service-account, mounts-proxy and managed etcd certificates, and
		// the front-proxy-client CA, which signs the credentials the shard's kubeconfig
		// subresource mints: no power beyond the client CA's, whose identities are
		// system:masters on every shard.
		return []pki.CA{pki.ServerCA, pki.ClientCA, pki.FrontProxyClientCA, pki.RequestHeaderClientCA, pki.ServiceAccountCA, pki.EtcdClientCA, pki.EtcdPeerCA}
	case FrontProxyJoin:
		// serving, the kubeconfig toward the shards, the request-header identity, and the
		// credentials its kubeconfig subresource mints (as for a shard).
		return []pki.CA{pki.ServerCA, pki.ClientCA, pki.FrontProxyClientCA, pki.RequestHeaderClientCA}
	case KubeconfigIssuer:
		return []pki.CA{pki.FrontProxyClientCA}
	}
	return nil
}

// Keys are the data keys a reference Secret must have, sorted: a well-formed one has each of
// them, non-empty, and no other but TrustKeys.
func (r Reference) Keys() []string {
	var keys []string
	switch r {
	case ShardJoin:
		keys = []string{RootShardURLKey, ExternalURLKey, ExternalAdminURLKey, RootCAKey, ClientCABundleKey, ServerCABundleKey}
	case FrontProxyJoin:
		keys = []string{RootShardURLKey, ExternalURLKey, ExternalAdminURLKey, ClientCABundleKey, ServerCABundleKey}
	case KubeconfigIssuer:
		keys = []string{RootShardURLKey, ExternalURLKey, ServerCABundleKey}
	case CacheClient:
		keys = []string{CacheURLKey, CACertKey, ClientCertKey, ClientKeyKey}
	}
	for _, ca := range r.KeyPairs() {
		keys = append(keys, CertKey(ca), KeyKey(ca))
	}
	slices.Sort(keys)
	return keys
}

// KeyPair is a certificate and its private key, PEM, as in a kubernetes.io/tls Secret.
type KeyPair struct {
	Cert, Key []byte
}

// Issued reports whether both halves are there.
func (k KeyPair) Issued() bool { return len(k.Cert) > 0 && len(k.Key) > 0 }

// FromSecret is the key pair of a Secret cert-manager wrote (tls.crt, tls.key); a nil Secret
// has none.
func FromSecret(s *corev1.Secret) KeyPair {
	if s == nil {
		return KeyPair{}
	}
	return KeyPair{Cert: s.Data[corev1.TLSCertKey], Key: s.Data[corev1.TLSPrivateKeyKey]}
}

// secret builds the reference Secret r of the owner name of kind.
func (r Reference) secret(kind, namespace, owner string, data map[string][]byte) *corev1ac.SecretApplyConfiguration {
	labels := pki.Labels(kind, owner, string(r))
	labels[Label] = string(r)
	return corev1ac.Secret(r.Name(owner), namespace).WithLabels(labels).WithType(r.Type()).WithData(data)
}
