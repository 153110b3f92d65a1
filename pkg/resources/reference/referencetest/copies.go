// Package referencetest makes well-formed copies of reference Secrets for tests of their
// consumers: built by the reference package's builders from CAs with real keys, and copied
// into another namespace as a sync tool would.
package referencetest

import (
	"maps"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// RootShard is the RootShard "root" of namespace "kcp", reached at
// https://kcp.example.com:6443: the origin of the copies.
func RootShard() *operatorv1alpha1.RootShard {
	return &operatorv1alpha1.RootShard{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "kcp"},
		Spec: operatorv1alpha1.RootShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{ClusterDomain: "cluster.local"},
			External:        operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 6443},
		},
	}
}

// CAs are a RootShard's CAs as cert-manager writes them, with real ECDSA keys: each
// intermediate's tls.crt is its certificate followed by the root CA's.
func CAs(t testing.TB) reference.RootShardCAs {
	t.Helper()
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
	cas.Bundles = rootshard.CABundles{ServerCA: first(pki.ServerCA), ClientCA: first(pki.ClientCA), FrontProxyClientCA: first(pki.FrontProxyClientCA)}
	return cas
}

// Copies are RootShard()'s reference Secrets (reference.RootShardReferences) built from
// cas, each copied into namespace under its own name: type, data and the reference label,
// nothing else, as a sync tool that keeps the label writes them.
func Copies(t testing.TB, cas reference.RootShardCAs, namespace string) map[reference.Reference]*corev1.Secret {
	t.Helper()
	built, err := reference.ForRootShard(RootShard(), cas)
	require.NoError(t, err)
	out := map[reference.Reference]*corev1.Secret{}
	for i, r := range reference.RootShardReferences {
		out[r] = Copy(built[i], namespace)
	}
	return out
}

// Copy is the copy of a built reference Secret in namespace.
func Copy(s *corev1ac.SecretApplyConfiguration, namespace string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: *s.Name, Namespace: namespace, ResourceVersion: "1",
			Labels: map[string]string{reference.Label: s.Labels[reference.Label]}},
		Type: *s.Type,
		Data: maps.Clone(s.Data),
	}
}
