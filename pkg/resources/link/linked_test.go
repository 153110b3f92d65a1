package link_test

import (
	"errors"
	"strings"
	"testing"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	cmmetaapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/meta/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/link/linktest"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/reference/referencetest"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// linkedBundles is a bundles Secret in namespace b of a Link that allows every consumer kind.
func linkedBundles(t *testing.T) *corev1.Secret {
	bootstrap := linktest.Bootstrap(t, "b", "eu-1-link-bootstrap", "bootstrap-uid")
	return linktest.Bundles(t, bootstrap, referencetest.CAs(t), reference.ShardJoin, reference.FrontProxyJoin, reference.KubeconfigIssuer)
}

// TestResolveBundles: the keyless data of each reference resolves, its CAs without a key.
func TestResolveBundles(t *testing.T) {
	bundles := linkedBundles(t)
	for _, ref := range []reference.Reference{reference.ShardJoin, reference.FrontProxyJoin, reference.KubeconfigIssuer} {
		r, err := link.ResolveBundles(bundles, ref)
		require.NoError(t, err, ref)
		assert.Equal(t, "https", r.RootShardURL.Scheme)
		require.Len(t, r.CAs, len(ref.KeyPairs()))
		for ca, pair := range r.CAs {
			assert.Empty(t, pair.PEM.Key, "%s: %s has no key", ref, ca)
			assert.True(t, pair.Cert.IsCA, "%s: %s", ref, ca)
			assert.NotEmpty(t, r.Trust[ca].Certs, "%s: %s is trusted", ref, ca)
		}
	}
}

// TestResolveBundlesRefuses: each fault is the resolver's error, naming the key of the
// bundles Secret as it is.
func TestResolveBundlesRefuses(t *testing.T) {
	for _, c := range []struct {
		name   string
		ref    reference.Reference
		mutate func(s *corev1.Secret)
		cause  error
		want   string
	}{
		{"a kind the Link does not allow", reference.ShardJoin, func(s *corev1.Secret) {
			for k := range s.Data {
				if strings.HasPrefix(k, "shard-join.") {
					delete(s.Data, k)
				}
			}
		}, reference.ErrMissingKey, "holds no shard-join data"},
		{"a certificate missing", reference.ShardJoin, func(s *corev1.Secret) { delete(s.Data, "shard-join.server-ca.crt") },
			reference.ErrMissingKey, `has no key "shard-join.server-ca.crt"`},
		{"a private key where a certificate belongs", reference.FrontProxyJoin, func(s *corev1.Secret) {
			s.Data["front-proxy-join.client-ca.crt"] = append(s.Data["front-proxy-join.client-ca.crt"], []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")...)
		}, reference.ErrMalformed, `key "front-proxy-join.client-ca.crt" holds a PEM block of type "PRIVATE KEY"`},
		{"a trust bundle without its CA", reference.KubeconfigIssuer, func(s *corev1.Secret) {
			s.Data["kubeconfig-issuer.front-proxy-client-ca-trust.crt"] = s.Data["shard-join.server-ca-trust.crt"]
		}, reference.ErrMalformed, `does not hold the CA of "kubeconfig-issuer.front-proxy-client-ca.crt"`},
		{"not a bundles Secret", reference.ShardJoin, func(s *corev1.Secret) { s.Type = reference.ShardJoin.Type() },
			reference.ErrWrongType, "is of type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := linkedBundles(t)
			c.mutate(s)
			_, err := link.ResolveBundles(s, c.ref)
			require.Error(t, err)
			var problem *reference.Error
			require.True(t, errors.As(err, &problem), "%v", err)
			assert.Equal(t, operatorv1alpha1.ReasonReferenceSecretInvalid, problem.Reason)
			assert.ErrorIs(t, err, c.cause)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// linked is what a linked consumer of kind writes: Join's Secrets and Issuers, and its
// builders' certificates as the batch of writes issues them.
type linked struct {
	joined reference.Joined
	certs  []*cmapply.CertificateApplyConfiguration
}

func linkedConsumers(t *testing.T) map[string]linked {
	bundles := linkedBundles(t)
	join := func(kind string, ref reference.Reference) reference.Joined {
		r, err := link.ResolveBundles(bundles, ref)
		require.NoError(t, err)
		return link.Join(kind, "b", "eu", r)
	}
	out := map[string]linked{}

	j := join(shard.Kind, reference.ShardJoin)
	s := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "b"},
		Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{Link: &operatorv1alpha1.RootShardLink{
			SecretRef: corev1.LocalObjectReference{Name: "eu-1-link-bootstrap"}}}}}
	out["shard"] = linked{j, j.IssuedBy(shard.Certificates(s, j.RootShard))}

	j = join(frontproxy.Kind, reference.FrontProxyJoin)
	fp := &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "b"}}
	out["frontproxy"] = linked{j, j.IssuedBy(frontproxy.FrontProxy{FrontProxy: fp, RootShard: j.RootShard}.Certificates())}

	j = join(kubeconfig.Kind, reference.KubeconfigIssuer)
	kc := &operatorv1alpha1.Kubeconfig{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "b"},
		Spec: operatorv1alpha1.KubeconfigSpec{Target: operatorv1alpha1.KubeconfigTarget{RootShardLink: &operatorv1alpha1.RootShardLink{
			SecretRef: corev1.LocalObjectReference{Name: "eu-1-link-bootstrap"}}},
			Username: "alice", Validity: metav1.Duration{Duration: 24 * 60 * 60 * 1e9}, SecretRef: corev1.LocalObjectReference{Name: "eu-kubeconfig"}}}
	target, err := kubeconfig.TargetOf(kc, j.RootShard, nil, nil)
	require.NoError(t, err)
	out["kubeconfig"] = linked{j, j.IssuedBy([]*cmapply.CertificateApplyConfiguration{kubeconfig.Kubeconfig{Kubeconfig: kc, Target: target}.Certificate()})}
	return out
}

// TestLinkedConsumersWriteNoCAKey: a linked consumer writes no CA Secret and no Issuer, no
// Secret of it holds a private key, and every certificate it has issued names the LinkIssuer
// of a local CA name of its joined RootShard.
func TestLinkedConsumersWriteNoCAKey(t *testing.T) {
	for kind, l := range linkedConsumers(t) {
		t.Run(kind, func(t *testing.T) {
			assert.Empty(t, l.joined.Issuers, "no CA Issuer")
			for _, s := range l.joined.Secrets {
				assert.NotEqual(t, corev1.SecretTypeTLS, *s.Type, "%s: no CA Secret", *s.Name)
				for k, v := range s.Data {
					assert.NotEqual(t, corev1.TLSPrivateKeyKey, k, *s.Name)
					assert.NotContains(t, string(v), "PRIVATE KEY", "%s: %s", *s.Name, k)
				}
			}
			local := map[string]bool{}
			for _, ca := range pki.IntermediateCAs {
				local[pki.CAName(l.joined.RootShard.Name, ca)] = true
			}
			require.NotEmpty(t, l.certs)
			for _, c := range l.certs {
				ref := c.Spec.IssuerRef
				assert.Equal(t, link.IssuerKind, *ref.Kind, *c.Name)
				assert.Equal(t, "operator.kcp.io", *ref.Group, *c.Name)
				assert.True(t, local[*ref.Name], "%s: issued by %s, a local CA name", *c.Name, *ref.Name)
				// What the home signs it from, to issue it again once the home signs from another CA.
				signer := l.joined.Signers[*ref.Name]
				require.NotEmpty(t, signer, "%s: the CA its issuer signs from is known", *c.Name)
				assert.NotContains(t, string(signer), "PRIVATE KEY")
				fps, err := pki.Fingerprints(signer)
				require.NoError(t, err, "%s: its signer is a certificate", *c.Name)
				assert.NotEmpty(t, fps)
			}
		})
	}
}

// TestLinkIssuerLeavesOtherIssuers: a certificate of another issuer than a local CA Issuer
// (a template's, a CacheServer's of the remote cluster) is left as it is.
func TestLinkIssuerLeavesOtherIssuers(t *testing.T) {
	l := linkedConsumers(t)["shard"]
	local := pki.CAName(l.joined.RootShard.Name, pki.ServerCA)
	for _, ref := range []*cmmetaapply.IssuerReferenceApplyConfiguration{
		cmmetaapply.IssuerReference().WithName("cache-ca").WithKind("Issuer").WithGroup("cert-manager.io"),
		cmmetaapply.IssuerReference().WithName(local).WithKind("ClusterIssuer").WithGroup("cert-manager.io"),
		cmmetaapply.IssuerReference().WithName(local).WithKind("Issuer").WithGroup("example.com"),
	} {
		c := cmapply.Certificate("x", "b").WithSpec(cmapply.CertificateSpec().WithIssuerRef(ref))
		kind, group := *ref.Kind, *ref.Group
		l.joined.IssuedBy([]*cmapply.CertificateApplyConfiguration{c})
		assert.Equal(t, kind, *c.Spec.IssuerRef.Kind, *ref.Name)
		assert.Equal(t, group, *c.Spec.IssuerRef.Group, *ref.Name)
	}
	// A copy's Joined issues nothing otherwise.
	var copied *reference.Joined
	c := cmapply.Certificate("x", "b").WithSpec(cmapply.CertificateSpec().WithIssuerRef(
		cmmetaapply.IssuerReference().WithName(local).WithKind("Issuer").WithGroup("cert-manager.io")))
	copied.IssuedBy([]*cmapply.CertificateApplyConfiguration{c})
	assert.Equal(t, "Issuer", *c.Spec.IssuerRef.Kind)
}

// TestLinkedGolden shows what a linked Shard, FrontProxy and Kubeconfig write of their
// joined RootShard (Secrets without their data, which is random here) and the certificates
// they have issued over the link.
func TestLinkedGolden(t *testing.T) {
	for kind, l := range linkedConsumers(t) {
		t.Run(kind, func(t *testing.T) {
			var objs []any
			for _, s := range l.joined.Secrets {
				shown := *s
				shown.Data = nil
				objs = append(objs, &shown)
			}
			for _, c := range l.certs {
				objs = append(objs, c)
			}
			golden.Assert(t, "linked-"+kind, objs...)
		})
	}
}
