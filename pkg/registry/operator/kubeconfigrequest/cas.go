package kubeconfigrequest

import (
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// errNotSynced says the cache cannot answer yet; the request may be retried.
var errNotSynced = errors.New("the server's cache of the host cluster's CAs is not synced yet")

// CASecretsSelector selects the Secrets a CASource needs: the RootShards' front-proxy-client
// CAs and merged server CA bundles, and nothing else.
func CASecretsSelector() labels.Selector {
	managed, _ := labels.NewRequirement(pki.LabelManagedBy, selection.Equals, []string{pki.ManagedBy})
	component, _ := labels.NewRequirement(pki.LabelComponent, selection.In,
		[]string{pki.FrontProxyClientCA.TemplateKey(), "merged-ca-bundle"})
	return labels.NewSelector().Add(*managed, *component)
}

// CASource reads the signing CA and the server CA bundle of a target from an informer's
// cache of the host cluster's Secrets: no request reads them from the host. A parsed CA is
// kept until its Secret changes.
type CASource struct {
	Secrets corev1listers.SecretLister
	Synced  cache.InformerSynced

	mu     sync.Mutex
	parsed map[string]parsedCA
}

type parsedCA struct {
	resourceVersion string
	ca              *credentials.CA
}

// For returns the CA that signs credentials for target, and the bundle that verifies its
// server. Before cert-manager issued them it says so.
func (s *CASource) For(target credentials.Target) (*credentials.CA, []byte, error) {
	if s == nil || s.Secrets == nil {
		return nil, nil, errors.New("the server has no host cluster to read CAs from")
	}
	if s.Synced != nil && !s.Synced() {
		return nil, nil, errNotSynced
	}
	ns := target.Namespace()
	secret, err := s.Secrets.Secrets(ns).Get(target.SignerSecret())
	if apierrors.IsNotFound(err) || (err == nil && (len(secret.Data["tls.crt"]) == 0 || len(secret.Data["tls.key"]) == 0)) {
		return nil, nil, fmt.Errorf("the front-proxy-client CA %s of %s is not issued yet", target.SignerSecret(), target)
	}
	if err != nil {
		return nil, nil, err
	}
	bundle, err := s.Secrets.Secrets(ns).Get(target.CABundleSecret())
	if apierrors.IsNotFound(err) || (err == nil && len(bundle.Data["tls.crt"]) == 0) {
		return nil, nil, fmt.Errorf("the server CA bundle %s of %s is not written yet", target.CABundleSecret(), target)
	}
	if err != nil {
		return nil, nil, err
	}

	key := ns + "/" + secret.Name
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.parsed[key]; ok && p.resourceVersion == secret.ResourceVersion {
		return p.ca, bundle.Data["tls.crt"], nil
	}
	ca, err := credentials.ParseCA(secret.Data["tls.crt"], secret.Data["tls.key"])
	if err != nil {
		return nil, nil, fmt.Errorf("the front-proxy-client CA %s of %s: %w", secret.Name, target, err)
	}
	if s.parsed == nil {
		s.parsed = map[string]parsedCA{}
	}
	s.parsed[key] = parsedCA{resourceVersion: secret.ResourceVersion, ca: ca}
	return ca, bundle.Data["tls.crt"], nil
}
