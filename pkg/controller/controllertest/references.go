package controllertest

import (
	"crypto/x509/pkix"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// Installation is a RootShard and a CacheServer of another namespace (kcp-system/root and
// kcp-system/cache), with real CA key pairs, whose reference Secrets a sync tool copied into
// team-a: what the consumers of a secretRef read.
type Installation struct {
	// Copies are the reference Secrets in team-a, by reference, each under its generated
	// name (root-shard-join, cache-cache-client, ...).
	Copies map[reference.Reference]*corev1.Secret
	// CAs are the RootShard's CAs the copies were made of; CacheCA and CacheClient the
	// CacheServer's CA certificate and the client certificate and key its copy carries.
	CAs         reference.RootShardCAs
	CacheCA     []byte
	CacheClient reference.KeyPair
}

// The installation's addresses, as the copies carry them.
const (
	InstallationRootShardURL = "https://root.kcp-system.example.com:6443"
	InstallationExternalHost = "kcp.example.com"
)

// NewInstallation builds the reference Secrets of kcp-system/root and kcp-system/cache with
// the reference package's builders, from CAs with real keys (each intermediate's tls.crt
// chained to the root CA, as cert-manager writes it), and copies them into team-a.
func NewInstallation(t *testing.T) *Installation {
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "kcp-system"},
		Spec: operatorv1alpha1.RootShardSpec{CommonShardSpec: operatorv1alpha1.CommonShardSpec{ShardBaseURL: InstallationRootShardURL},
			External: operatorv1alpha1.ExternalConfig{Hostname: InstallationExternalHost, Port: 8443}}}
	rootCA, _ := credentialstest.NewCA(t, "root-ca")
	cas := reference.RootShardCAs{RootCA: rootCA, KeyPairs: map[pki.CA]reference.KeyPair{}}
	for _, ca := range pki.IntermediateCAs {
		cert, key := credentialstest.NewCA(t, string(ca))
		cas.KeyPairs[ca] = reference.KeyPair{Cert: append(cert, rootCA...), Key: key}
	}
	first := func(ca pki.CA) []byte {
		b, err := pki.FirstCertificate(cas.KeyPairs[ca].Cert)
		require.NoError(t, err)
		return b
	}
	cas.Bundles = rootshard.CABundles{ServerCA: first(pki.ServerCA), ClientCA: first(pki.ClientCA),
		FrontProxyClientCA: first(pki.FrontProxyClientCA)}
	built, err := reference.ForRootShard(rs, cas)
	require.NoError(t, err)

	in := &Installation{Copies: map[reference.Reference]*corev1.Secret{}, CAs: cas}
	for _, s := range built {
		in.Copies[reference.Reference(s.Labels[reference.Label])] = Copied(s)
	}
	cacheCA, cacheCAKey := credentialstest.NewCA(t, "cache-ca")
	ca, err := credentials.ParseCA(cacheCA, cacheCAKey)
	require.NoError(t, err)
	client, err := ca.Mint(pkix.Name{CommonName: "cache-client"}, time.Now(), time.Hour)
	require.NoError(t, err)
	in.CacheCA, in.CacheClient = cacheCA, reference.KeyPair{Cert: client.CertPEM, Key: client.KeyPEM}
	cs := cacheserver.CacheServer{CacheServer: &operatorv1alpha1.CacheServer{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "kcp-system"}}}
	in.Copies[reference.CacheClient] = Copied(reference.ForCacheServer(cs, cacheCA, in.CacheClient))
	return in
}

// Copied is what a sync tool writes into team-a from a reference Secret the server built:
// its type, its data and the reference label, nothing else of its metadata.
func Copied(s *corev1ac.SecretApplyConfiguration) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: *s.Name, Namespace: "team-a", ResourceVersion: "1",
			Labels: map[string]string{reference.Label: s.Labels[reference.Label]}},
		Type: *s.Type,
		Data: maps.Clone(s.Data),
	}
}

// PutReference writes a copy into team-a as the host's cache of copies sees it: the
// informer selects the Secrets labelled operator.kcp.io/reference, so a Secret without the
// label is not (or no longer) in it.
func (h *Host) PutReference(t *testing.T, s *corev1.Secret) {
	t.Helper()
	if _, labelled := s.Labels[reference.Label]; !labelled {
		require.NoError(t, h.Caches["references"].Delete(s))
		return
	}
	require.NoError(t, h.Caches["references"].Update(s.DeepCopy()))
}
