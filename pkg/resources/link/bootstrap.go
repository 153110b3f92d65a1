package link

import (
	"fmt"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// BootstrapType is the Secret type of a bootstrap Secret. The remote refuses a Secret of
// another type; Kubernetes never changes a Secret's type.
const BootstrapType corev1.SecretType = "operator.kcp.io/" + BootstrapRole

// The keys of a bootstrap Secret.
const (
	// ListenerURLKey is the https URL of the listener.
	ListenerURLKey = "listener-url"
	// ServerNameKey is the SNI that selects the RootShard's serving certificate, and the
	// name the remote verifies it by (ServerName).
	ServerNameKey = "server-name"
	// CACertKey is the link CA's trust bundle: the first certificate of each of its live
	// slots, in slot order; both while it rotates (docs/rotation.md).
	CACertKey = "ca.crt"
	// ClientCertKey and ClientKeyKey are the remote's client certificate, as cert-manager
	// wrote it (with its chain), and its key.
	ClientCertKey = corev1.TLSCertKey
	ClientKeyKey  = corev1.TLSPrivateKeyKey
)

// BootstrapKeys are the keys a bootstrap Secret has, sorted: a well-formed one has each of
// them, non-empty.
var BootstrapKeys = []string{CACertKey, ListenerURLKey, ServerNameKey, ClientCertKey, ClientKeyKey}

// Bootstrap builds the bootstrap Secret of the Link d, <link>-link-bootstrap: the listener's
// URL and server name, the link CA's trust bundle trust (the live slots of the RootShard's
// link CA, as the controller reads them), and the client key pair client (the Secret of
// Client(d)). It is labelled as the reference Secrets are, owned by the Link, with the
// reference label (value link-bootstrap), which a copy keeps. It is an error while the
// client certificate or the link CA is not issued yet, or when the listener's URL is no
// https URL.
func Bootstrap(d Declaration, client reference.KeyPair, trust []byte) (*corev1ac.SecretApplyConfiguration, error) {
	switch {
	case !client.Issued():
		return nil, fmt.Errorf("the bootstrap Secret of Link %s/%s: the client certificate %s is not issued yet", d.Namespace, d.Name, ClientName(d.Name))
	case len(trust) == 0:
		return nil, fmt.Errorf("the bootstrap Secret of Link %s/%s: the link CA %s is not issued yet", d.Namespace, d.Name, CAName(d.RootShard))
	}
	if u, err := url.Parse(d.ListenerURL); err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("the bootstrap Secret of Link %s/%s: the listener's URL %q is no https URL", d.Namespace, d.Name, d.ListenerURL)
	}
	labels := pki.Labels(Kind, d.Name, BootstrapRole)
	labels[reference.Label] = BootstrapRole
	return corev1ac.Secret(BootstrapName(d.Name), d.Namespace).WithLabels(labels).WithType(BootstrapType).
		WithData(map[string][]byte{
			ListenerURLKey: []byte(d.ListenerURL),
			ServerNameKey:  []byte(ServerName(d.RootShard)),
			CACertKey:      trust,
			ClientCertKey:  client.Cert,
			ClientKeyKey:   client.Key,
		}), nil
}
