package remote

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// renewWhenDue waits until the client certificate of b is due for renewal (RenewAt), renews
// it and writes the new pair into secret: nil once written, or once secret changed (another
// copy carried, or renewed by another); failed renewals are retried after the Backoff.
// It follows the link CA by what the stream delivered (got, once in the bundles Secret):
// a link CA bundle that changes what the link trusts ends the session (nil), so that the
// next one trusts it; a link CA the home signs from that did not sign the client
// certificate makes it due at once, and such a renewal counts only once that CA signed it.
func (m *Manager) renewWhenDue(ctx context.Context, c *Client, secret *corev1.Secret, b *linkpki.Bootstrapped, h *held,
	got <-chan link.Bundles) error {
	due := RenewAt(b.Client.Cert.NotBefore, b.Client.Cert.NotAfter)
	// from is the link CA the home signs from, when it did not sign the client certificate.
	var from *x509.Certificate
	backoff := m.Backoff
	for {
		wait := due.Sub(m.now())
		if m.Recheck > 0 && wait > m.Recheck {
			wait = m.Recheck
		}
		if wait > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			case bundles := <-got:
				if trustChanged(b, bundles.LinkCA) {
					klog.FromContext(ctx).Info("The link CA bundle changed: the link trusts it from now on")
					return nil
				}
				switch issuer := renewFrom(b, bundles.LinkCAIssuer); {
				case issuer != nil && (from == nil || !issuer.Equal(from)):
					from, due = issuer, m.now()
				case issuer == nil && from != nil:
					from, due = nil, RenewAt(b.Client.Cert.NotBefore, b.Client.Cert.NotAfter)
				}
				continue
			}
		}
		if m.now().Before(due) {
			if changed, err := m.changed(ctx, secret); err != nil || changed {
				return err
			}
			continue
		}
		pair, err := c.Renew(ctx)
		if err == nil && from != nil && !signs(from, pair.Cert) {
			err = fmt.Errorf("the home signed it from another link CA than the one it says it signs from, which it may not use yet")
		}
		if err == nil {
			err = m.writePair(ctx, secret, pair)
		}
		if err == nil {
			klog.FromContext(ctx).Info("Renewed the link's client certificate", "fromNewLinkCA", from != nil)
			return nil
		}
		m.failed(h, fmt.Errorf("renewing the link's client certificate: %w", err))
		due = m.now().Add(backoff.Step())
	}
}

// trustChanged reports whether the link CA bundle received makes the link of b trust other
// CAs than it does (linkpki.LinkTrust).
func trustChanged(b *linkpki.Bootstrapped, received []byte) bool {
	fingerprints := func(certs []*x509.Certificate) []string {
		out := make([]string, 0, len(certs))
		for _, c := range certs {
			out = append(out, pki.Fingerprint(c))
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return !slices.Equal(fingerprints(b.Trust.Certs), fingerprints(linkpki.LinkTrust(b.Carried, b.Client.Cert, received)))
}

// renewFrom is the link CA the home signs from (issuer, PEM, as the stream says it) when it
// did not sign the client certificate of b; nil when it did, or the home says none.
func renewFrom(b *linkpki.Bootstrapped, issuer []byte) *x509.Certificate {
	block, _ := pem.Decode(issuer)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil || b.Client.Cert.CheckSignatureFrom(ca) == nil {
		return nil
	}
	return ca
}

// signs reports whether ca signed the first certificate of the PEM chain.
func signs(ca *x509.Certificate, chain []byte) bool {
	block, _ := pem.Decode(chain)
	if block == nil {
		return false
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	return err == nil && leaf.CheckSignatureFrom(ca) == nil
}

// changed reports whether the bootstrap Secret is no longer secret.
func (m *Manager) changed(ctx context.Context, secret *corev1.Secret) (bool, error) {
	now, err := m.kube.CoreV1().Secrets(secret.Namespace).Get(ctx, secret.Name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("reading the bootstrap Secret again: %w", err)
	}
	return now.ResourceVersion != secret.ResourceVersion, nil
}

// RenewAt is when a client certificate valid from notBefore to notAfter is renewed: at two
// thirds of its life, as cert-manager renews by default.
func RenewAt(notBefore, notAfter time.Time) time.Time {
	return notBefore.Add(notAfter.Sub(notBefore) * 2 / 3)
}

// writePair writes the renewed pair into the bootstrap Secret: its tls.crt and tls.key alone
// (the Secret is the user's), by a merge patch that holds only if the Secret is still the one
// the session read (its resourceVersion, a precondition of the patch).
func (m *Manager) writePair(ctx context.Context, secret *corev1.Secret, pair reference.KeyPair) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": secret.ResourceVersion},
		"data":     map[string][]byte{linkpki.ClientCertKey: pair.Cert, linkpki.ClientKeyKey: pair.Key},
	})
	if err != nil {
		return err
	}
	if _, err := m.kube.CoreV1().Secrets(secret.Namespace).Patch(ctx, secret.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: pki.ManagedBy}); err != nil {
		return fmt.Errorf("writing the renewed pair into the bootstrap Secret: %w", err)
	}
	return nil
}
