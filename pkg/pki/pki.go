// Package pki is the certificate hierarchy of a kcp setup as data (docs/PKI.md): the names of its
// CAs and certificates, their subjects and usages, their lifetimes, and how a user's
// certificate template is merged into a certificate. It does no I/O; the resources builders
// turn it into cert-manager objects.
package pki

import (
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The namespace bootstrap: a self-signed Issuer and the CA it signs, shared by every
// RootShard of a namespace that has no spec.certificates.
const (
	BootstrapIssuer = "kcp-pki-bootstrap"
	BootstrapCA     = "kcp-pki-ca"
)

// BootstrapLabels are the labels of the namespace bootstrap PKI.
func BootstrapLabels() map[string]string {
	return map[string]string{LabelManagedBy: ManagedBy, LabelComponent: "pki-bootstrap", LabelInstance: BootstrapCA}
}

// CA is the role of an intermediate CA below a RootShard's root CA.
type CA string

// The intermediate CAs of a RootShard.
const (
	ServerCA              CA = "server"
	ClientCA              CA = "client"
	FrontProxyClientCA    CA = "front-proxy-client"
	RequestHeaderClientCA CA = "requestheader-client"
	ServiceAccountCA      CA = "service-account"
	// EtcdClientCA issues a managed etcd's server certificate and its clients' certificates:
	// etcd checks its clients against the CA that it presents itself.
	EtcdClientCA CA = "etcd-client"
	// EtcdPeerCA issues the certificates a managed etcd's members present to one another.
	EtcdPeerCA CA = "etcd-peer"
)

// IntermediateCAs are the CAs every RootShard has below its root CA, in a stable order.
var IntermediateCAs = []CA{ServerCA, ClientCA, FrontProxyClientCA, RequestHeaderClientCA, ServiceAccountCA, EtcdClientCA, EtcdPeerCA}

// LinkCA is the CA of a RootShard's links (docs/PKI.md#the-link-pki): it signs the remotes'
// client certificates and the listener's serving certificate, and nothing kcp trusts. It is
// an intermediate CA like the others (its Certificate <rs>-link-ca, its slots, its Issuer,
// its template key link-ca, its authority "link"), but not one of IntermediateCAs: a RootShard
// has it only while a Link names it, and no reference Secret carries it.
const LinkCA CA = "link"

// RootCATemplateKey is the certificateTemplates key of a RootShard's root CA.
const RootCATemplateKey = "root-ca"

// TemplateKey is the certificateTemplates key of an intermediate CA.
func (ca CA) TemplateKey() string { return string(ca) + "-ca" }

// RootCAName is the name of a RootShard's root CA: its Certificate, Secret and Issuer.
func RootCAName(rootShard string) string { return rootShard + "-ca" }

// CAName is the name of an intermediate CA of a RootShard: its Certificate, Secret and Issuer.
func CAName(rootShard string, ca CA) string { return rootShard + "-" + string(ca) + "-ca" }

// Usage is what a leaf certificate is for.
type Usage string

// The usages of leaf certificates.
const (
	ServerAuth Usage = "server"
	ClientAuth Usage = "client"
	// PeerAuth is both: an etcd member serves its peers and dials them with one certificate.
	PeerAuth Usage = "peer"
	Signing  Usage = "signing"
)

// KeyUsages are the X.509 key usages cert-manager puts into a certificate of the usage.
func (u Usage) KeyUsages() []cmv1.KeyUsage {
	switch u {
	case ServerAuth:
		return []cmv1.KeyUsage{cmv1.UsageDigitalSignature, cmv1.UsageKeyEncipherment, cmv1.UsageServerAuth}
	case ClientAuth:
		return []cmv1.KeyUsage{cmv1.UsageDigitalSignature, cmv1.UsageKeyEncipherment, cmv1.UsageClientAuth}
	case PeerAuth:
		return []cmv1.KeyUsage{cmv1.UsageDigitalSignature, cmv1.UsageKeyEncipherment, cmv1.UsageServerAuth, cmv1.UsageClientAuth}
	default:
		return []cmv1.KeyUsage{cmv1.UsageDigitalSignature}
	}
}

// CAKeyUsages are the key usages of every CA certificate.
var CAKeyUsages = []cmv1.KeyUsage{cmv1.UsageCertSign, cmv1.UsageCRLSign, cmv1.UsageDigitalSignature}

// Lifetimes, unless a certificate template says otherwise.
var (
	CADuration       = metav1.Duration{Duration: 10 * 365 * 24 * time.Hour}
	CARenewBefore    = metav1.Duration{Duration: 30 * 24 * time.Hour}
	LeafDuration     = metav1.Duration{Duration: 365 * 24 * time.Hour}
	LeafRenewBefore  = metav1.Duration{Duration: 7 * 24 * time.Hour}
	DefaultAlgorithm = cmv1.ECDSAKeyAlgorithm
	DefaultKeySize   = 256
	DefaultRotation  = cmv1.RotationPolicyAlways
	// CARotation keeps a CA's key when cert-manager renews it: the renewed CA has the same
	// subject and key, so every chain it signed, and every bundle that trusts it, stays
	// valid. Only a rotation (a new CA next to the old one) changes a CA's key.
	CARotation = cmv1.RotationPolicyNever
	// SigningRotation keeps a signing leaf's key when cert-manager renews it: the tokens a
	// shard signed are verified by that key, not by a CA (docs/rotation.md), so only a
	// rotation of the service-account CA changes it.
	SigningRotation   = cmv1.RotationPolicyNever
	DefaultKeyEncoded = cmv1.PKCS8
)

// Leaf is a leaf certificate of a setup.
type Leaf struct {
	// Name of the Certificate and its Secret.
	Name string
	// Role is the certificateTemplates key that customizes it.
	Role string
	// Issuer is the CA Issuer that signs it.
	Issuer       string
	CommonName   string
	Organization []string
	DNSNames     []string
	IPAddresses  []string
	// URIs are URI SANs, such as a link's kcp-setups:link:<namespace>/<name>/<uid>.
	URIs  []string
	Usage Usage
}
