package remote

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// Linked is a consumer of this cluster that names a bootstrap Secret through its link.
type Linked struct {
	Bootstrap types.NamespacedName
	Kind      link.ConsumerKind
	Consumer  link.ConsumerRef
}

// ConsumerSource is how the issuer finds the linked consumers of one kind.
type ConsumerSource struct {
	Kind link.ConsumerKind
	// Label is the owner label's kind (pki.OwnerLabel) of what such a consumer writes, and the
	// kind its joined RootShard is named after (reference.JoinedName): shard, frontproxy,
	// kubeconfig.
	Label string
	// Bootstrap is the bootstrap Secret, in namespace, that the consumer namespace/name names
	// through its link, when that consumer exists with uid and names one (ok); an error only
	// when it cannot be told.
	Bootstrap func(namespace, name string, uid types.UID) (secret string, ok bool, err error)
	// CacheClient is whether such a consumer may have a cache client signed over its link
	// (a Shard's spec.cache.link), as the consumer kind CacheClient: its Certificate names
	// the LinkIssuer linkpki.CacheClientIssuer.
	CacheClient bool
}

// Verdict is what the issuer does with a CertificateRequest.
type Verdict string

// The verdicts.
const (
	// Ignore: not the LinkIssuer's, or finished (issued, failed or denied already).
	Ignore Verdict = "Ignore"
	// Refuse: the request was denied by another approver: it is marked not Ready, Denied.
	Refuse Verdict = "Refuse"
	// Deny: not a linked consumer's request: denied, never sent over the link.
	Deny Verdict = "Deny"
	// Sign: a linked consumer's: approved if need be, and sent over its link.
	Sign Verdict = "Sign"
	// Wait: maybe a linked consumer's, which this server has not reconciled since it
	// started: neither approved nor denied, asked again later.
	Wait Verdict = "Wait"
)

// Decision is the issuer's decision on a CertificateRequest.
type Decision struct {
	Verdict Verdict
	// Linked and Role are what a Sign asks: for the consumer, by the CA role.
	Linked Linked
	Role   pki.CA
	// Why says why a request is denied.
	Why string
}

// IsLinkIssuers reports whether cr names the LinkIssuer.
func IsLinkIssuers(cr *cmv1.CertificateRequest) bool {
	return isLinkIssuer(cr.Spec.IssuerRef)
}

// isLinkIssuer reports whether ref names the LinkIssuer.
func isLinkIssuer(ref cmmeta.IssuerReference) bool {
	return ref.Group == linkpki.IssuerGroup && ref.Kind == linkpki.IssuerKind
}

// Lookups are what Decide reads of the cluster.
type Lookups struct {
	// Certificate is the Certificate namespace/name, nil when there is none.
	Certificate func(namespace, name string) (*cmv1.Certificate, error)
	// Applied says whether this server applied a Certificate for the consumer of owner UID
	// (Applied.Of).
	Applied func(crt *cmv1.Certificate, owner types.UID) Applying
	// Secret is the Secret namespace/name, nil when there is none.
	Secret func(namespace, name string) (*corev1.Secret, error)
}

// Decide decides what the issuer does with cr. It signs only a request whose controller is
// a Certificate (by UID) that this server applied (l.Applied: not only labelled so, as
// anyone who may create Certificates can) for a consumer (the owner labels: its kind and
// name, and its UID) which, by sources, exists with that UID and names a bootstrap Secret
// through its link; only for a CA role the consumer's joined RootShard has an issuer of
// that name for (or its cache client's, by the CacheServer's CA, as the kind CacheClient,
// where the source allows one); and only for the private key cert-manager made for that Certificate's
// issuance (the Secret of its status.nextPrivateKeySecretName, which that Certificate
// controls), not a key of whoever may create CertificateRequests. Any other is denied,
// with the reason, which names no key; one of a consumer this server has not reconciled
// since it started waits (Wait).
func Decide(cr *cmv1.CertificateRequest, l Lookups, sources []ConsumerSource) (Decision, error) {
	switch {
	case !IsLinkIssuers(cr) || finished(cr):
		return Decision{Verdict: Ignore}, nil
	case hasCondition(cr, cmv1.CertificateRequestConditionDenied):
		return Decision{Verdict: Refuse}, nil
	}
	deny := func(format string, args ...any) (Decision, error) {
		return Decision{Verdict: Deny, Why: fmt.Sprintf(format, args...)}, nil
	}
	owner := metav1.GetControllerOf(cr)
	if owner == nil || owner.Kind != cmv1.CertificateKind || owner.APIVersion != cmv1.SchemeGroupVersion.String() {
		return deny("it is not controlled by a Certificate")
	}
	crt, err := l.Certificate(cr.Namespace, owner.Name)
	if err != nil {
		return Decision{}, fmt.Errorf("reading the Certificate %s/%s: %w", cr.Namespace, owner.Name, err)
	}
	if crt == nil || crt.UID != owner.UID {
		return deny("its Certificate %s (UID %s) is not there", owner.Name, owner.UID)
	}
	uid := types.UID(crt.Labels[pki.LabelOwnerUID])
	if crt.Labels[pki.LabelManagedBy] != pki.ManagedBy || uid == "" {
		return deny("its Certificate %s was not written for a consumer", crt.Name)
	}
	var found []ConsumerSource
	for _, s := range sources {
		if crt.Labels[pki.OwnerLabel(s.Label)] != "" {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		return deny("its Certificate %s is not of one consumer", crt.Name)
	}
	source := found[0]
	name := crt.Labels[pki.OwnerLabel(source.Label)]
	secret, ok, err := source.Bootstrap(cr.Namespace, name, uid)
	if err != nil {
		return Decision{}, err
	}
	if !ok {
		return deny("its Certificate %s is of the %s %s (UID %s), which is not there or names no link", crt.Name, source.Kind, name, uid)
	}
	switch l.Applied(crt, uid) {
	case NotYet:
		return Decision{Verdict: Wait, Why: fmt.Sprintf("this server has not applied the Certificates of the %s %s since it started", source.Kind, name)}, nil
	case NotOurs:
		return deny("its Certificate %s (UID %s) is not one this server applied for the %s %s", crt.Name, crt.UID, source.Kind, name)
	}
	kind, role, ok := source.roleOf(cr.Spec.IssuerRef.Name, reference.JoinedName(source.Label, name))
	if !ok {
		return deny("the issuer %s is no CA of the %s %s", cr.Spec.IssuerRef.Name, source.Kind, name)
	}
	if why, err := keyMismatch(cr, crt, l.Secret); err != nil || why != "" {
		if err != nil {
			return Decision{}, err
		}
		return deny("%s", why)
	}
	return Decision{Verdict: Sign, Role: role, Linked: Linked{
		Bootstrap: types.NamespacedName{Namespace: cr.Namespace, Name: secret},
		Kind:      kind,
		Consumer:  link.ConsumerRef{Namespace: cr.Namespace, Name: name, UID: string(uid)},
	}}, nil
}

// keyMismatch says why the CSR of cr is not of the private key cert-manager made for the
// issuance of crt (the Secret of its status.nextPrivateKeySecretName, controlled by crt),
// or "" when it is. It names no key.
func keyMismatch(cr *cmv1.CertificateRequest, crt *cmv1.Certificate, secrets func(namespace, name string) (*corev1.Secret, error)) (string, error) {
	if crt.Status.NextPrivateKeySecretName == nil || *crt.Status.NextPrivateKeySecretName == "" {
		return fmt.Sprintf("its Certificate %s is not being issued: it names no next private key", crt.Name), nil
	}
	keyName := *crt.Status.NextPrivateKeySecretName
	secret, err := secrets(crt.Namespace, keyName)
	if err != nil {
		return "", fmt.Errorf("reading the Secret %s/%s: %w", crt.Namespace, keyName, err)
	}
	if secret == nil {
		return fmt.Sprintf("the Secret %s of its Certificate's next private key is not there", keyName), nil
	}
	if c := metav1.GetControllerOf(secret); c == nil || c.UID != crt.UID {
		return fmt.Sprintf("the Secret %s of its Certificate's next private key is not controlled by the Certificate %s", keyName, crt.Name), nil
	}
	key, ok := publicKeyOf(secret.Data[corev1.TLSPrivateKeyKey])
	if !ok {
		return fmt.Sprintf("the Secret %s of its Certificate's next private key holds no private key", keyName), nil
	}
	block, _ := pem.Decode(cr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return "its request holds no PEM CERTIFICATE REQUEST", nil
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return "its request holds no CSR that parses", nil
	}
	if !key.Equal(csr.PublicKey) {
		return fmt.Sprintf("its CSR is not of the private key cert-manager made for the Certificate %s", crt.Name), nil
	}
	return "", nil
}

// publicKeyOf is the public key of a PEM private key (SEC 1, PKCS#1 or PKCS#8, as
// cert-manager may encode them).
func publicKeyOf(keyPEM []byte) (interface{ Equal(crypto.PublicKey) bool }, bool) {
	key, err := credentials.ParseKey(keyPEM)
	if err != nil {
		return nil, false
	}
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	return pub, ok
}

// roleOf is the consumer kind and the CA role the issuer name stands for, for a consumer of s
// whose joined RootShard is joined: a local CA of that RootShard (pki.CAName), signed for the
// consumer's own kind; or, when s may have a cache client signed, its cache client's
// (linkpki.CacheClientIssuer), signed for the kind CacheClient by the CacheServer's CA.
func (s ConsumerSource) roleOf(issuer, joined string) (link.ConsumerKind, pki.CA, bool) {
	if s.CacheClient && issuer == linkpki.CacheClientIssuer(joined) {
		return link.CacheClient, link.CacheServerCA, true
	}
	for _, ca := range pki.IntermediateCAs {
		if pki.CAName(joined, ca) == issuer {
			return s.Kind, ca, true
		}
	}
	return "", "", false
}

// finished reports whether cr needs nothing more of an issuer: issued, failed or denied.
func finished(cr *cmv1.CertificateRequest) bool {
	for _, c := range cr.Status.Conditions {
		if c.Type == cmv1.CertificateRequestConditionReady {
			switch c.Reason {
			case cmv1.CertificateRequestReasonIssued, cmv1.CertificateRequestReasonFailed, cmv1.CertificateRequestReasonDenied:
				return true
			}
		}
	}
	return len(cr.Status.Certificate) > 0
}

// hasCondition reports whether cr has the condition t, True.
func hasCondition(cr *cmv1.CertificateRequest, t cmv1.CertificateRequestConditionType) bool {
	for _, c := range cr.Status.Conditions {
		if c.Type == t && c.Status == cmmeta.ConditionTrue {
			return true
		}
	}
	return false
}
