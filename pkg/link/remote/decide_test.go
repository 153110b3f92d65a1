package remote

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"sync"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// The linked consumer of the issuer's tests: the Shard remote/eu-shard, which names the
// bootstrap Secret eu-1-link-bootstrap.
const (
	shardName = "eu-shard"
	shardUID  = "uid-shard"
	crtUID    = "uid-crt"
)

var bootstrapName = linkpki.BootstrapName(testLink.Name)

// testSources find the Shard eu-shard of shardUID, linked, which may have a cache client
// signed; no FrontProxy is linked.
func testSources() []ConsumerSource {
	return []ConsumerSource{
		{Kind: link.Shard, Label: "shard", CacheClient: true, Bootstrap: func(namespace, name string, uid types.UID) (string, bool, error) {
			if namespace == "remote" && name == shardName && uid == shardUID {
				return bootstrapName, true, nil
			}
			return "", false, nil
		}},
		{Kind: link.FrontProxy, Label: "frontproxy", Bootstrap: func(string, string, types.UID) (string, bool, error) { return "", false, nil }},
	}
}

// nextKeyName is the Secret of shardCertificate's next private key, while it is issued.
const nextKeyName = shardName + "-server-next"

// The private key cert-manager made for shardCertificate's issuance (the Secret
// nextKeyName holds it), and the CSR of linkedRequest, made with it; a stranger's key, and
// a CSR of the same subject made with it.
var (
	nextKey     = sync.OnceValue(func() *ecdsa.PrivateKey { return newKey() })
	csrOfNext   = sync.OnceValue(func() []byte { return csrOf(nextKey()) })
	strangerCSR = sync.OnceValue(func() []byte { return csrOf(newKey()) })
)

func newKey() *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return key
}

// csrOf is a PEM CSR of eu-shard's server certificate, made with key.
func csrOf(key *ecdsa.PrivateKey) []byte {
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: shardName}}, key)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// shardCertificate is a Certificate the Shard controller wrote for eu-shard, being issued
// with the key of nextKeySecret.
func shardCertificate() *cmv1.Certificate {
	return &cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Name: shardName + "-server", Namespace: "remote", UID: crtUID,
		Labels: map[string]string{pki.LabelManagedBy: pki.ManagedBy, pki.OwnerLabel("shard"): shardName, pki.LabelOwnerUID: shardUID}},
		Spec: cmv1.CertificateSpec{SecretName: shardName + "-server", IssuerRef: cmmeta.IssuerReference{Group: linkpki.IssuerGroup,
			Kind: linkpki.IssuerKind, Name: pki.CAName(reference.JoinedName("shard", shardName), pki.ServerCA)}},
		Status: cmv1.CertificateStatus{NextPrivateKeySecretName: ptr.To(nextKeyName)}}
}

// nextKeySecret is the Secret of shardCertificate's next private key, as cert-manager's key
// manager makes it: controlled by the Certificate, the key in PKCS#8.
func nextKeySecret() *corev1.Secret {
	der, err := x509.MarshalPKCS8PrivateKey(nextKey())
	if err != nil {
		panic(err)
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: nextKeyName, Namespace: "remote",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(shardCertificate(), cmv1.SchemeGroupVersion.WithKind(cmv1.CertificateKind))}},
		Data: map[string][]byte{corev1.TLSPrivateKeyKey: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})}}
}

// linkedRequest is a CertificateRequest of shardCertificate for the LinkIssuer of its server
// CA, as cert-manager makes it.
func linkedRequest() *cmv1.CertificateRequest {
	return &cmv1.CertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: shardName + "-server-1", Namespace: "remote", Labels: shardCertificate().Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(shardCertificate(), cmv1.SchemeGroupVersion.WithKind(cmv1.CertificateKind))}},
		Spec: cmv1.CertificateRequestSpec{Request: csrOfNext(),
			IssuerRef: cmmeta.IssuerReference{Group: linkpki.IssuerGroup, Kind: linkpki.IssuerKind,
				Name: pki.CAName(reference.JoinedName("shard", shardName), pki.ServerCA)}},
	}
}

// lookups find crts and secrets, and say applied of every Certificate.
func lookups(crts []*cmv1.Certificate, applied Applying, secrets ...*corev1.Secret) Lookups {
	return Lookups{
		Certificate: func(namespace, name string) (*cmv1.Certificate, error) {
			for _, c := range crts {
				if c.Namespace == namespace && c.Name == name {
					return c, nil
				}
			}
			return nil, nil
		},
		Applied: func(*cmv1.Certificate, types.UID) Applying { return applied },
		Secret: func(namespace, name string) (*corev1.Secret, error) {
			for _, s := range secrets {
				if s.Namespace == namespace && s.Name == name {
					return s, nil
				}
			}
			return nil, nil
		},
	}
}

// TestDecide: only the request of a linked consumer's Certificate, by UID all along, is
// signed, for the CA its issuer names; any other is denied.
func TestDecide(t *testing.T) {
	linked := Linked{Bootstrap: types.NamespacedName{Namespace: "remote", Name: bootstrapName}, Kind: link.Shard,
		Consumer: link.ConsumerRef{Namespace: "remote", Name: shardName, UID: shardUID}}
	crt := func(change func(*cmv1.Certificate)) *cmv1.Certificate {
		c := shardCertificate()
		change(c)
		return c
	}
	for _, tc := range []struct {
		name    string
		request func(*cmv1.CertificateRequest)
		crts    []*cmv1.Certificate
		// applied is what Applied says of the Certificate: Ours unless set.
		applied *Applying
		// secret changes the Secret of the next private key; nil removes it.
		secret  func(*corev1.Secret) *corev1.Secret
		verdict Verdict
		role    pki.CA
		// kind is the consumer kind signed for: the Shard's unless set.
		kind link.ConsumerKind
		why  string
	}{
		{name: "a linked Shard's server certificate", verdict: Sign, role: pki.ServerCA},
		{name: "a linked Shard's cache client: a CacheClient, by the CacheServer's CA", verdict: Sign, role: link.CacheServerCA, kind: link.CacheClient,
			request: func(cr *cmv1.CertificateRequest) {
				cr.Spec.IssuerRef.Name = linkpki.CacheClientIssuer(reference.JoinedName("shard", shardName))
			}},
		{name: "the cache client issuer of another consumer", verdict: Deny, why: "is no CA of", request: func(cr *cmv1.CertificateRequest) {
			cr.Spec.IssuerRef.Name = linkpki.CacheClientIssuer(reference.JoinedName("shard", "other"))
		}},
		{name: "a linked Shard's etcd client certificate", verdict: Sign, role: pki.EtcdClientCA, request: func(cr *cmv1.CertificateRequest) {
			cr.Spec.IssuerRef.Name = pki.CAName(reference.JoinedName("shard", shardName), pki.EtcdClientCA)
		}},
		{name: "another issuer's", verdict: Ignore, request: func(cr *cmv1.CertificateRequest) {
			cr.Spec.IssuerRef = cmmeta.IssuerReference{Group: "cert-manager.io", Kind: "Issuer", Name: cr.Spec.IssuerRef.Name}
		}},
		{name: "a LinkIssuer of another group", verdict: Ignore, request: func(cr *cmv1.CertificateRequest) { cr.Spec.IssuerRef.Group = "example.com" }},
		{name: "issued already", verdict: Ignore, request: func(cr *cmv1.CertificateRequest) { cr.Status.Certificate = []byte("chain") }},
		{name: "failed already", verdict: Ignore, request: func(cr *cmv1.CertificateRequest) {
			cr.Status.Conditions = []cmv1.CertificateRequestCondition{{Type: cmv1.CertificateRequestConditionReady, Status: cmmeta.ConditionFalse,
				Reason: cmv1.CertificateRequestReasonFailed}}
		}},
		{name: "denied by an approver", verdict: Refuse, request: func(cr *cmv1.CertificateRequest) {
			cr.Status.Conditions = []cmv1.CertificateRequestCondition{{Type: cmv1.CertificateRequestConditionDenied, Status: cmmeta.ConditionTrue}}
		}},
		{name: "no owner", verdict: Deny, why: "not controlled by a Certificate", request: func(cr *cmv1.CertificateRequest) { cr.OwnerReferences = nil }},
		{name: "an owner that is no controller", verdict: Deny, why: "not controlled by a Certificate", request: func(cr *cmv1.CertificateRequest) {
			cr.OwnerReferences[0].Controller = nil
		}},
		{name: "controlled by another kind", verdict: Deny, why: "not controlled by a Certificate", request: func(cr *cmv1.CertificateRequest) {
			cr.OwnerReferences[0].Kind = "Secret"
			cr.OwnerReferences[0].APIVersion = "v1"
		}},
		{name: "its Certificate gone", verdict: Deny, why: "is not there", crts: []*cmv1.Certificate{}},
		{name: "a Certificate of its name but another UID", verdict: Deny, why: "is not there",
			crts: []*cmv1.Certificate{crt(func(c *cmv1.Certificate) { c.UID = "uid-foreign" })}},
		{name: "a Certificate not written by the controllers", verdict: Deny, why: "not written for a consumer",
			crts: []*cmv1.Certificate{crt(func(c *cmv1.Certificate) { delete(c.Labels, pki.LabelManagedBy) })}},
		{name: "a Certificate without the owner's UID", verdict: Deny, why: "not written for a consumer",
			crts: []*cmv1.Certificate{crt(func(c *cmv1.Certificate) { delete(c.Labels, pki.LabelOwnerUID) })}},
		{name: "a Certificate of another Shard", verdict: Deny, why: "names no link",
			crts: []*cmv1.Certificate{crt(func(c *cmv1.Certificate) { c.Labels[pki.OwnerLabel("shard")] = "other" })}},
		{name: "a Certificate of a Shard of the same name, deleted (another UID)", verdict: Deny, why: "names no link",
			crts: []*cmv1.Certificate{crt(func(c *cmv1.Certificate) { c.Labels[pki.LabelOwnerUID] = "uid-old" })}},
		{name: "a Certificate of a FrontProxy that names no link", verdict: Deny, why: "names no link",
			crts: []*cmv1.Certificate{crt(func(c *cmv1.Certificate) {
				delete(c.Labels, pki.OwnerLabel("shard"))
				c.Labels[pki.OwnerLabel("frontproxy")] = shardName
			})}},
		{name: "a Certificate of two owners", verdict: Deny, why: "not of one consumer",
			crts: []*cmv1.Certificate{crt(func(c *cmv1.Certificate) { c.Labels[pki.OwnerLabel("frontproxy")] = shardName })}},
		{name: "a Certificate of no owner kind", verdict: Deny, why: "not of one consumer",
			crts: []*cmv1.Certificate{crt(func(c *cmv1.Certificate) { delete(c.Labels, pki.OwnerLabel("shard")) })}},
		{name: "the issuer of another consumer's CA", verdict: Deny, why: "is no CA of", request: func(cr *cmv1.CertificateRequest) {
			cr.Spec.IssuerRef.Name = pki.CAName(reference.JoinedName("shard", "other"), pki.ServerCA)
		}},
		{name: "the issuer of the link CA", verdict: Deny, why: "is no CA of", request: func(cr *cmv1.CertificateRequest) {
			cr.Spec.IssuerRef.Name = pki.CAName(reference.JoinedName("shard", shardName), pki.LinkCA)
		}},
		{name: "a Certificate forged with our labels, not applied by this server", verdict: Deny, why: "not one this server applied",
			applied: ptr.To(NotOurs)},
		{name: "a Certificate of a consumer not reconciled since the server started: waits", verdict: Wait,
			why: "has not applied the Certificates of the Shard eu-shard", applied: ptr.To(NotYet)},
		{name: "a CSR of a key of its own, not cert-manager's for the Certificate", verdict: Deny,
			why:     "its CSR is not of the private key cert-manager made for the Certificate eu-shard-server",
			request: func(cr *cmv1.CertificateRequest) { cr.Spec.Request = strangerCSR() }},
		{name: "no CSR", verdict: Deny, why: "holds no PEM CERTIFICATE REQUEST", request: func(cr *cmv1.CertificateRequest) { cr.Spec.Request = []byte("csr") }},
		{name: "a Certificate not being issued", verdict: Deny, why: "is not being issued",
			crts: []*cmv1.Certificate{crt(func(c *cmv1.Certificate) { c.Status.NextPrivateKeySecretName = nil })}},
		{name: "the next private key's Secret gone", verdict: Deny, why: "is not there",
			secret: func(*corev1.Secret) *corev1.Secret { return nil }},
		{name: "a next private key's Secret the Certificate does not control", verdict: Deny, why: "is not controlled by the Certificate",
			secret: func(s *corev1.Secret) *corev1.Secret { s.OwnerReferences[0].UID = "uid-foreign"; return s }},
		{name: "the next private key in SEC 1", verdict: Sign, role: pki.ServerCA, secret: func(s *corev1.Secret) *corev1.Secret {
			der, err := x509.MarshalECPrivateKey(nextKey())
			if err != nil {
				panic(err)
			}
			s.Data[corev1.TLSPrivateKeyKey] = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
			return s
		}},
		{name: "a next private key's Secret without a key", verdict: Deny, why: "holds no private key",
			secret: func(s *corev1.Secret) *corev1.Secret { s.Data = nil; return s }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr := linkedRequest()
			if tc.request != nil {
				tc.request(cr)
			}
			crts := tc.crts
			if crts == nil {
				crts = []*cmv1.Certificate{shardCertificate()}
			}
			applied := Ours
			if tc.applied != nil {
				applied = *tc.applied
			}
			var secrets []*corev1.Secret
			secret := nextKeySecret()
			if tc.secret != nil {
				secret = tc.secret(secret)
			}
			if secret != nil {
				secrets = append(secrets, secret)
			}
			d, err := Decide(cr, lookups(crts, applied, secrets...), testSources())
			require.NoError(t, err)
			assert.Equal(t, tc.verdict, d.Verdict, d.Why)
			assert.Contains(t, d.Why, tc.why)
			assert.NotContains(t, d.Why, "BEGIN", "a reason names no key material")
			if tc.verdict == Sign {
				want := linked
				if tc.kind != "" {
					want.Kind = tc.kind
				}
				assert.Equal(t, tc.role, d.Role)
				assert.Equal(t, want, d.Linked)
			}
		})
	}
	t.Run("a cache client of a consumer kind that may have none is denied", func(t *testing.T) {
		sources := testSources()
		sources[0].CacheClient = false
		cr := linkedRequest()
		cr.Spec.IssuerRef.Name = linkpki.CacheClientIssuer(reference.JoinedName("shard", shardName))
		d, err := Decide(cr, lookups([]*cmv1.Certificate{shardCertificate()}, Ours, nextKeySecret()), sources)
		require.NoError(t, err)
		assert.Equal(t, Deny, d.Verdict)
		assert.Contains(t, d.Why, "is no CA of")
	})
	t.Run("a consumer that cannot be told is retried, not denied", func(t *testing.T) {
		sources := testSources()
		sources[0].Bootstrap = func(string, string, types.UID) (string, bool, error) {
			return "", false, errors.New("cache not synced")
		}
		_, err := Decide(linkedRequest(), lookups([]*cmv1.Certificate{shardCertificate()}, Ours, nextKeySecret()), sources)
		require.Error(t, err)
	})
}
