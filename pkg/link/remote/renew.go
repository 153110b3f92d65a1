package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// renewWhenDue waits until the client certificate of b is due for renewal (RenewAt), renews
// it and writes the new pair into secret: nil once written, or once secret changed (another
// copy carried, or renewed by another); failed renewals are retried after the Backoff.
func (m *Manager) renewWhenDue(ctx context.Context, c *Client, secret *corev1.Secret, b *linkpki.Bootstrapped, h *held) error {
	due := RenewAt(b.Client.Cert.NotBefore, b.Client.Cert.NotAfter)
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
			}
		}
		if m.now().Before(due) {
			if changed, err := m.changed(ctx, secret); err != nil || changed {
				return err
			}
			continue
		}
		pair, err := c.Renew(ctx)
		if err == nil {
			err = m.writePair(ctx, secret, pair)
		}
		if err == nil {
			klog.FromContext(ctx).Info("Renewed the link's client certificate")
			return nil
		}
		m.failed(h, fmt.Errorf("renewing the link's client certificate: %w", err))
		due = m.now().Add(backoff.Step())
	}
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
