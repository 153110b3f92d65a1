package hostcluster_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// kcpOperatorLabels are kcp-operator's labels on what it makes for the RootShard instance.
func kcpOperatorLabels(instance string) map[string]string {
	return map[string]string{pki.LabelManagedBy: "kcp-operator", "app.kubernetes.io/name": "kcp",
		pki.LabelInstance: instance, pki.LabelComponent: "rootshard"}
}

// caPair is a CA certificate signed by parent (itself when nil) and its key, P-384 so that a
// kept key shows in the Certificate's spec.
func caPair(t *testing.T, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, []byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return cert, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// TestACAIsTakenOverOnlyFromKcpOperatorsCertificate: a CA's Secret is taken over, with its
// key, only when it is kcp-operator's Certificate's of a name kcp-operator makes for the
// RootShard, signed by that Certificate's Issuer's CA and holding the key of its
// certificate; any other Secret of the name is a NameConflict and its key is never kept.
func TestACAIsTakenOverOnlyFromKcpOperatorsCertificate(t *testing.T) {
	const ns = "team-a"
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: ns, UID: "uid-root"}}
	adopting := hostcluster.Owner{Kind: "rootshard", Name: "root", UID: rs.UID, Adopt: true, KcpOperatorNames: hostcluster.KcpOperatorNames(rs)}
	root, rootKey, rootPEM, rootKeyPEM := caPair(t, "root-ca", nil, nil)
	_, _, clientCAPEM, clientKeyPEM := caPair(t, "root-client-ca", root, rootKey)
	_, _, forgedPEM, forgedKeyPEM := caPair(t, "root-client-ca", nil, nil) // mallory's, self-signed

	type host struct {
		certificate  bool              // kcp-operator's Certificate of the name
		certLabels   map[string]string // its labels
		issuer       string            // its Issuer: "ca" (root-ca's Secret) or "self"
		crt, key     []byte            // the Secret's
		secretLabels map[string]string
	}
	legit := func(change func(*host)) host {
		h := host{certificate: true, certLabels: kcpOperatorLabels("root"), issuer: "ca", crt: clientCAPEM, key: clientKeyPEM,
			secretLabels: map[string]string{"operator.kcp.io/rootshard": "root"}}
		if change != nil {
			change(&h)
		}
		return h
	}
	for _, tc := range []struct {
		name    string
		ca      string // the CA's name, its Certificate's and its Secret's
		owner   hostcluster.Owner
		host    host
		adopted bool
	}{
		{name: "kcp-operator's CA, signed by its Issuer's CA", ca: "root-client-ca", owner: adopting, host: legit(nil), adopted: true},
		{name: "the root CA of a self-signed Issuer", ca: "root-ca", owner: adopting, adopted: true,
			host: legit(func(h *host) { h.issuer, h.crt, h.key = "self", rootPEM, rootKeyPEM })},
		{name: "a Secret planted where kcp-operator made no Certificate", ca: "root-front-proxy-client-ca", owner: adopting,
			host: legit(func(h *host) { h.certificate = false })},
		{name: "a planted Secret, self-signed with another key", ca: "root-client-ca", owner: adopting,
			host: legit(func(h *host) { h.crt, h.key = forgedPEM, forgedKeyPEM })},
		{name: "the real certificate with another key", ca: "root-client-ca", owner: adopting,
			host: legit(func(h *host) { h.key = forgedKeyPEM })},
		{name: "a Certificate of kcp-operator's for another RootShard", ca: "root-client-ca", owner: adopting,
			host: legit(func(h *host) { h.certLabels = kcpOperatorLabels("other") })},
		{name: "a rotation's slot is never kcp-operator's", ca: "root-client-ca-next", owner: adopting, host: legit(nil)},
		{name: "a CA kcp-operator does not have", ca: "root-etcd-client-ca", owner: adopting, host: legit(nil)},
		{name: "without a takeover", ca: "root-client-ca", owner: hostcluster.Owner{Kind: "rootshard", Name: "root", UID: rs.UID}, host: legit(nil)},
		{name: "a Secret that carries our labels but not the owner's UID", ca: "root-client-ca", owner: adopting,
			host: legit(func(h *host) {
				h.certificate = false
				h.crt, h.key = forgedPEM, forgedKeyPEM
				h.secretLabels = pki.Labels("rootshard", "root", "client-ca")
			})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := controllertest.NewHost(t)
			ctx := hostcluster.WithOwner(t.Context(), tc.owner)
			if tc.ca != "root-ca" {
				_, err := h.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "root-ca", Namespace: ns},
					Data: map[string][]byte{"tls.crt": rootPEM, "tls.key": rootKeyPEM}}, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			for _, i := range []*cmv1.Issuer{
				{ObjectMeta: metav1.ObjectMeta{Name: "root-ca", Namespace: ns, Labels: kcpOperatorLabels("root")},
					Spec: cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{CA: &cmv1.CAIssuer{SecretName: "root-ca"}}}},
				{ObjectMeta: metav1.ObjectMeta{Name: "selfsigned", Namespace: ns},
					Spec: cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{SelfSigned: &cmv1.SelfSignedIssuer{}}}},
			} {
				_, err := h.CM.CertmanagerV1().Issuers(ns).Create(ctx, i, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			issuer := "root-ca"
			if tc.host.issuer == "self" {
				issuer = "selfsigned"
			}
			if tc.host.certificate {
				_, err := h.CM.CertmanagerV1().Certificates(ns).Create(ctx, &cmv1.Certificate{
					ObjectMeta: metav1.ObjectMeta{Name: tc.ca, Namespace: ns, Labels: tc.host.certLabels},
					Spec:       cmv1.CertificateSpec{SecretName: tc.ca, IsCA: true, IssuerRef: cmmeta.IssuerReference{Name: issuer, Kind: "Issuer", Group: "cert-manager.io"}},
				}, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			_, err := h.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: tc.ca, Namespace: ns, Labels: tc.host.secretLabels,
					Annotations: map[string]string{"cert-manager.io/certificate-name": tc.ca}},
				Data: map[string][]byte{"tls.crt": tc.host.crt, "tls.key": tc.host.key}}, metav1.CreateOptions{})
			require.NoError(t, err)

			labels := pki.Labels("rootshard", "root", "client-ca")
			desired := cmapply.Certificate(tc.ca, ns).WithLabels(labels).WithSpec(cmapply.CertificateSpec().WithIsCA(true).
				WithSecretName(tc.ca).WithSecretTemplate(cmapply.CertificateSecretTemplate().WithLabels(labels)).
				WithPrivateKey(cmapply.CertificatePrivateKey().WithAlgorithm(cmv1.ECDSAKeyAlgorithm).WithSize(256).
					WithRotationPolicy(cmv1.RotationPolicyNever)))
			wrote, err := h.CertificateApplier.ApplyIfChanged(ctx, desired)
			if tc.adopted {
				require.NoError(t, err)
				assert.True(t, wrote)
				assert.Equal(t, 384, *desired.Spec.PrivateKey.Size, "the CA keeps kcp-operator's key")
				return
			}
			var conflict *hostcluster.NameConflictError
			require.ErrorAs(t, err, &conflict)
			assert.False(t, wrote, "nothing is written")
			assert.Equal(t, 256, *desired.Spec.PrivateKey.Size, "no key is kept from a Secret that is not kcp-operator's Certificate's")
			t.Log(conflict.Error())
		})
	}
}
