package link

import (
	"crypto/x509"
	"fmt"
	"net/url"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// The bodies the listener and a remote server exchange (docs/links.md#the-wire). All are
// JSON; []byte fields are base64, as in Kubernetes' own APIs.

// RenewPath is the route by which a remote renews its own client certificate:
// POST /v1/renew with a SignRequest whose CSR is CheckRenewal's.
const RenewPath = "/v1/renew"

// Renew asks the remote's own client certificate to be signed again by the link CA.
const Renew Operation = "renew"

// SignRequest is the body of POST /v1/sign/{kind}/{role} and of POST /v1/renew.
type SignRequest struct {
	// Consumer is the remote consumer the certificate is for; its kind is the route's. Empty
	// for a renewal.
	Consumer ConsumerRef `json:"consumer,omitzero"`
	// Request is the PEM certificate signing request, as cert-manager wrote it.
	Request []byte `json:"request"`
	// Duration is the validity asked; the home's issuer decides, as for any
	// CertificateRequest. Zero leaves it to the issuer.
	Duration metav1.Duration `json:"duration,omitzero"`
}

// ConsumerRef names a consumer in the remote cluster.
type ConsumerRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
}

// SignResponse is the answer to a SignRequest that was signed (200).
type SignResponse struct {
	// Certificate is the PEM chain the home's CertificateRequest got: the leaf first.
	Certificate []byte `json:"certificate"`
	// CA is the CertificateRequest's status.ca: for a CA Issuer, the top of the signing CA's
	// chain (the root the chain in Certificate leads to).
	CA []byte `json:"ca"`
}

// StreamMessage is one line of the GET /v1/bundles stream (newline-delimited JSON). The
// first is the current Bundles; another follows each change within seconds, and a Heartbeat
// every HeartbeatInterval keeps idle connections and their proxies open.
type StreamMessage struct {
	Type    StreamMessageType `json:"type"`
	Bundles *Bundles          `json:"bundles,omitempty"`
}

// HeartbeatInterval is how often the stream says it is alive when nothing changes; a remote
// that hears nothing for three of them reconnects.
const HeartbeatInterval = 30 * time.Second

// StreamMessageType is the type of a StreamMessage.
type StreamMessageType string

// The types of a StreamMessage.
const (
	BundlesMessage   StreamMessageType = "Bundles"
	HeartbeatMessage StreamMessageType = "Heartbeat"
)

// Bundles is what a linked remote may know of its RootShard: per consumer kind the Link
// allows, the data of the reference Secret that kind joins with (docs/references.md) without
// any private key (no "*.key", no "tls.key": the remote's leaves are signed over the link),
// and the link CA's trust bundle. Revision changes whenever anything else does.
type Bundles struct {
	Revision string `json:"revision"`
	// References are, per consumer kind, the keyless data of its reference Secret.
	References map[ConsumerKind]map[string][]byte `json:"references"`
	// LinkCA is the link CA's trust bundle: the CA of each live slot, both while it rotates.
	LinkCA []byte `json:"linkCA"`
	// LinkCAIssuer is the link CA certificate the home signs from now (the slot of its
	// Issuer): a remote whose client certificate it did not sign renews it at once, so that
	// the drop of the old link CA at the end of a rotation does not cut it off. Empty from a
	// home that does not say.
	LinkCAIssuer []byte `json:"linkCAIssuer,omitempty"`
}

// CheckRenewal checks that csr asks again for the client certificate of d's remote, as
// resources/link.ClientLeaf issues it: CN and the one DNS SAN the identity, the one URI SAN
// d's URI, no organization, client usage, and a key the listener signs.
func CheckRenewal(csr *x509.CertificateRequest, d Declaration) error {
	if csr == nil {
		return fmt.Errorf("no certificate signing request")
	}
	if err := csr.CheckSignature(); err != nil {
		return fmt.Errorf("the signature of the request: %w", err)
	}
	if err := checkKey(csr.PublicKey); err != nil {
		return err
	}
	switch {
	case csr.Subject.CommonName != d.Identity || len(csr.Subject.Organization) > 0:
		return fmt.Errorf("the subject CN=%q O=%q is not the Link's identity", csr.Subject.CommonName, csr.Subject.Organization)
	case !slices.Equal(csr.DNSNames, []string{d.Identity}):
		return fmt.Errorf("the DNS SANs %q are not the Link's identity alone", csr.DNSNames)
	case !slices.EqualFunc(csr.URIs, []string{d.URI()}, func(u *url.URL, s string) bool { return u.String() == s }):
		return fmt.Errorf("the URI SANs are not the Link's alone")
	case len(csr.IPAddresses) > 0 || len(csr.EmailAddresses) > 0:
		return fmt.Errorf("IP or e-mail SANs, which the client certificate does not carry")
	}
	issued := Issued{Role: "link-client", CA: pki.LinkCA, Usage: pki.ClientAuth}
	for _, check := range []func(*x509.CertificateRequest, Issued, Declaration) error{checkSubjectAttributes, checkExtensions} {
		if err := check(csr, issued, d); err != nil {
			return fmt.Errorf("the client certificate of Link %s/%s: %w", d.Namespace, d.Name, err)
		}
	}
	return nil
}
