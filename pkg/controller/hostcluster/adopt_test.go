package hostcluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// kcpOperators are the labels kcp-operator puts on what it makes for the RootShard root.
var kcpOperators = map[string]string{pki.LabelManagedBy: "kcp-operator", labelAppName: "kcp",
	pki.LabelInstance: "root", pki.LabelComponent: "rootshard"}

// TestOnlyAnAdoptingOwnerTakesOverKcpOperatorsObjects: with the adopt annotation, what
// kcp-operator made for an object of the owner's kind and name is written over; without it,
// or for another name, component or maker, it stays a NameConflict.
func TestOnlyAnAdoptingOwnerTakesOverKcpOperatorsObjects(t *testing.T) {
	owner := Owner{Kind: "rootshard", Name: "root", UID: "uid-1", Adopt: true, KcpOperatorNames: []string{"root-kcp"}}
	with := func(change map[string]string) map[string]string {
		l := map[string]string{}
		for k, v := range kcpOperators {
			l[k] = v
		}
		for k, v := range change {
			if v == "" {
				delete(l, k)
				continue
			}
			l[k] = v
		}
		return l
	}
	certSecret := func(l map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "root-kcp", Namespace: "team-a", Labels: l,
			Annotations: map[string]string{annotationCertificateName: "root-kcp"}}}
	}
	tests := []struct {
		name    string
		owner   Owner
		host    *corev1.ConfigMap
		adopted bool
	}{
		{name: "kcp-operator's, adopting", owner: owner, host: existingCM(kcpOperators), adopted: true},
		{name: "kcp-operator's, without the annotation", owner: Owner{Kind: "rootshard", Name: "root", UID: "uid-1"}, host: existingCM(kcpOperators)},
		{name: "kcp-operator's for another RootShard", owner: owner, host: existingCM(with(map[string]string{pki.LabelInstance: "other"}))},
		{name: "kcp-operator's for a Shard of the name", owner: owner, host: existingCM(with(map[string]string{pki.LabelComponent: "shard"}))},
		{name: "another maker", owner: owner, host: existingCM(with(map[string]string{pki.LabelManagedBy: "helm"}))},
		{name: "a name kcp-operator does not make for the owner", owner: Owner{Kind: "rootshard", Name: "root", UID: "uid-1", Adopt: true,
			KcpOperatorNames: []string{"root-server"}}, host: existingCM(kcpOperators)},
		// A Secret's labels prove nothing: only kcp-operator's Certificate does (adoptableSecret).
		{name: "labelled as a cert-manager Secret of kcp-operator's", owner: owner,
			host: certSecret(map[string]string{"operator.kcp.io/rootshard": "root"})},
		{name: "a cert-manager Secret of another RootShard", owner: owner,
			host: certSecret(map[string]string{"operator.kcp.io/rootshard": "other"})},
		// kcp-operator v0.9's Compiled* objects own what it makes, and up to v0.8 its six kinds
		// do: the garbage collector would delete it once they go.
		{name: "kcp-operator's, still owned by a CompiledRootShard", owner: owner,
			host: ownedBy(existingCM(kcpOperators), "deploy.operator.kcp.io/v1alpha1", "CompiledRootShard")},
		{name: "kcp-operator's, still owned by kcp-operator's RootShard", owner: owner,
			host: ownedBy(existingCM(kcpOperators), "operator.kcp.io/v1alpha1", "RootShard")},
		{name: "kcp-operator's, owned by something else", owner: owner, adopted: true,
			host: ownedBy(existingCM(kcpOperators), "v1", "ConfigMap")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			applies := 0
			a := configMapApplier(tc.host, &applies)
			var took bool
			a.Adopt = func(_ context.Context, existing metav1.Object, _ *corev1ac.ConfigMapApplyConfiguration) error {
				took = existing.GetName() == "root-kcp"
				return nil
			}
			_, err := a.ApplyIfChanged(WithOwner(t.Context(), tc.owner),
				corev1ac.ConfigMap("root-kcp", "team-a").WithLabels(pki.Labels("rootshard", "root", "kcp")))
			if tc.adopted {
				require.NoError(t, err)
				assert.True(t, took)
				assert.Equal(t, 1, applies)
				return
			}
			var conflict *NameConflictError
			require.ErrorAs(t, err, &conflict)
			assert.False(t, took)
			assert.Zero(t, applies)
		})
	}
}

// ownedBy is cm with an owner reference to an object of kind in apiVersion.
func ownedBy(cm *corev1.ConfigMap, apiVersion, kind string) *corev1.ConfigMap {
	cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "root", UID: "uid-kcp-operator"}}
	return cm
}

func existingCM(l map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "root-kcp", Namespace: "team-a", Labels: l}}
}

// selfSigned is a PEM certificate of key.
func selfSigned(t *testing.T, key any, pub any) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "root-ca"}, IsCA: true,
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// TestACAKeepsItsKeysAlgorithm: a CA that keeps its key on renewal asks for the algorithm
// and size of the key it has (kcp-operator's RSA 4096, not our ECDSA P-256), so that
// cert-manager renews it; a Certificate that may change its key is left as it is.
func TestACAKeepsItsKeysAlgorithm(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	ecKey, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	ca := func(rotation cmv1.PrivateKeyRotationPolicy) *cmapply.CertificateApplyConfiguration {
		return cmapply.Certificate("root-ca", "team-a").WithSpec(cmapply.CertificateSpec().WithIsCA(true).WithPrivateKey(
			cmapply.CertificatePrivateKey().WithAlgorithm(cmv1.ECDSAKeyAlgorithm).WithSize(256).WithRotationPolicy(rotation)))
	}
	c := ca(cmv1.RotationPolicyNever)
	keepKey(c, map[string][]byte{"tls.crt": selfSigned(t, rsaKey, &rsaKey.PublicKey), "tls.key": []byte("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n")})
	assert.Equal(t, cmv1.RSAKeyAlgorithm, *c.Spec.PrivateKey.Algorithm)
	assert.Equal(t, 2048, *c.Spec.PrivateKey.Size)
	assert.Equal(t, cmv1.PKCS1, *c.Spec.PrivateKey.Encoding, "kcp-operator's encoding")
	c = ca(cmv1.RotationPolicyNever)
	keepKey(c, map[string][]byte{"tls.crt": selfSigned(t, ecKey, &ecKey.PublicKey)})
	assert.Equal(t, cmv1.ECDSAKeyAlgorithm, *c.Spec.PrivateKey.Algorithm)
	assert.Equal(t, 384, *c.Spec.PrivateKey.Size)
	c = ca(cmv1.RotationPolicyAlways)
	keepKey(c, map[string][]byte{"tls.crt": selfSigned(t, rsaKey, &rsaKey.PublicKey)})
	assert.Equal(t, cmv1.ECDSAKeyAlgorithm, *c.Spec.PrivateKey.Algorithm, "a key that may change follows the spec")
	c = ca(cmv1.RotationPolicyNever)
	keepKey(c, map[string][]byte{"tls.crt": []byte("not PEM")})
	assert.Equal(t, 256, *c.Spec.PrivateKey.Size)
}

// TestKcpOperatorNames: the names a takeover may adopt are kcp-operator's for the kind and
// name, never a rotation's slot or a CA kcp-operator does not have.
func TestKcpOperatorNames(t *testing.T) {
	rs := KcpOperatorNames(&operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root"}})
	for _, name := range []string{"root-kcp", "root-ca", "root-client-ca", "root-front-proxy-client-ca", "root-server", "root-proxy", "root-proxy-server"} {
		assert.Contains(t, rs, name)
	}
	fp := &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Name: "fp"}}
	fp.Spec.RootShard.Reference = &corev1.LocalObjectReference{Name: "root"}
	cs := KcpOperatorNames(&operatorv1alpha1.CacheServer{ObjectMeta: metav1.ObjectMeta{Name: "cache"}})
	assert.Contains(t, KcpOperatorNames(fp), "root-fp-server")
	assert.Contains(t, cs, "cache-ca")
	for _, names := range [][]string{rs, KcpOperatorNames(fp), cs,
		KcpOperatorNames(&operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: "s"}}),
		KcpOperatorNames(&operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Name: "vw"}})} {
		for _, name := range names {
			assert.False(t, strings.HasSuffix(name, pki.NextSuffix) || strings.HasSuffix(name, pki.TrustSuffix), "%s is a rotation's slot", name)
			assert.NotContains(t, name, "etcd", "kcp-operator has no etcd CA")
		}
	}
	assert.Empty(t, KcpOperatorNames(&operatorv1alpha1.Kubeconfig{ObjectMeta: metav1.ObjectMeta{Name: "kc"}}))
}
