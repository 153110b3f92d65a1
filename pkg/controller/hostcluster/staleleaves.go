package hostcluster

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"sync"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// ReissueStaleLeaves has cert-manager issue again, at once, each certificate of certs that
// the current certificate of its CA did not sign. cert-manager never issues a certificate
// again because its issuer changed: after a CA is rotated (its Secret deleted, or renewed with
// a new key) or issued twice, the merged bundles carry the new CA, and every client that
// trusts them rejects the old leaf until it expires. A leaf's Secret is deleted, so that
// cert-manager issues it with a new key. A CA, such as an intermediate after its root CA
// rotated (docs/rotation.md), keeps its key: its Secret holds the key everything below it
// was signed with, so its Certificate is marked Issuing instead, as cmctl renew does, and
// cert-manager issues it again with the same key and subject; what it signed still verifies.
// Only certificates whose Certificate is Ready are touched, never one in the middle of an
// issuance, and only those whose issuer is a CA Issuer whose Secret holds a certificate: one
// of issuers, or one of ours in the cache; never a signing leaf. A certificate of another
// issuer is checked against signers (the CA certificates, PEM, that such issuers sign from,
// by issuer name: a linked consumer's LinkIssuer signs over the link from the CA its home
// says, reference.Joined.Signers), and left alone when it has none. It returns how many it
// had issued again.
func (h *Host) ReissueStaleLeaves(ctx context.Context, issuers []*cmapply.IssuerApplyConfiguration, certs []*cmapply.CertificateApplyConfiguration,
	signers map[string][]byte) (int, error) {
	caSecrets := map[string]string{}
	for _, i := range issuers {
		if i.Name != nil && i.Spec != nil && i.Spec.CA != nil && i.Spec.CA.SecretName != nil {
			caSecrets[*i.Name] = *i.Spec.CA.SecretName
		}
	}
	deleted := 0
	for _, c := range certs {
		// A signing leaf keeps its key: its verifiers know it by that key, not by its CA, and a
		// rotation brings a new key in its other slot (pki.SigningSlots).
		if pki.IsSigningLeaf(c.Labels) {
			continue
		}
		if c.Spec == nil || c.Spec.SecretName == nil || c.Spec.IssuerRef == nil || c.Spec.IssuerRef.Name == nil {
			continue
		}
		ns := *c.Namespace
		issuer := *c.Spec.IssuerRef.Name
		var caPEM []byte
		var caVersion, caSecret string
		if c.Spec.IssuerRef.Kind != nil && *c.Spec.IssuerRef.Kind != "Issuer" {
			signer := firstCertificate(signers[issuer])
			if signer == nil {
				continue
			}
			caPEM, caVersion, caSecret = signers[issuer], pki.Fingerprint(signer), issuer
		} else {
			var ok bool
			if caSecret, ok = caSecrets[issuer]; !ok {
				// A Shard's or a FrontProxy's leaves are signed by its RootShard's Issuers, which
				// the RootShard applies: those are read from the cache of ours.
				if caSecret, ok = h.caIssuerSecret(ns, issuer); !ok {
					continue
				}
			}
		}
		cert, err := h.Certificates.Certificates(ns).Get(*c.Name)
		if err != nil || !certificateReady(cert) {
			continue
		}
		leaf, err := h.Secrets.Secrets(ns).Get(*c.Spec.SecretName)
		if err != nil {
			continue
		}
		if mark, ok := ownerMark(ctx, c.Labels); ok && ownedByAnother(leaf, mark) {
			continue // another object's, which derives the same name
		}
		if caPEM == nil {
			ca, err := h.Secrets.Secrets(ns).Get(caSecret)
			if err != nil {
				continue
			}
			caPEM, caVersion = ca.Data["tls.crt"], ca.ResourceVersion
		}
		if !h.notSignedBy(leaf, caPEM, caVersion) {
			continue
		}
		if c.Spec.IsCA != nil && *c.Spec.IsCA {
			renewed, err := h.renewCA(ctx, cert, caSecret)
			if renewed {
				deleted++
			}
			if err != nil {
				return deleted, err
			}
			continue
		}
		klog.FromContext(ctx).Info("Deleting a leaf certificate's Secret so that cert-manager issues it again: its CA changed since it was issued",
			"namespace", ns, "secret", leaf.Name, "ca", caSecret)
		// The UID precondition spares a Secret cert-manager wrote anew meanwhile; a Secret
		// already gone was deleted by an earlier reconcile that the cache has not seen yet.
		err = h.Kube.CoreV1().Secrets(ns).Delete(ctx, leaf.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &leaf.UID}})
		switch {
		case err == nil:
			deleted++
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		default:
			return deleted, fmt.Errorf("deleting the Secret %s/%s of a leaf its CA did not sign: %w", ns, leaf.Name, err)
		}
	}
	return deleted, nil
}

// renewCA marks the Certificate of a CA whose issuer's CA changed Issuing, so that
// cert-manager issues it again from that CA; its key stays (privateKey.rotationPolicy Never,
// docs/PKI.md). A Certificate marked already, or written since the cache saw it, is left to
// the next reconcile.
func (h *Host) renewCA(ctx context.Context, cert *cmv1.Certificate, caSecret string) (bool, error) {
	for _, cond := range cert.Status.Conditions {
		if cond.Type == cmv1.CertificateConditionIssuing && cond.Status == cmmeta.ConditionTrue {
			return false, nil
		}
	}
	klog.FromContext(ctx).Info("Issuing a CA again, with its key, from its issuer's current CA: the issuer's CA changed since it was issued",
		"namespace", cert.Namespace, "certificate", cert.Name, "ca", caSecret)
	renewed := cert.DeepCopy()
	now := metav1.Now()
	renewed.Status.Conditions = append(renewed.Status.Conditions, cmv1.CertificateCondition{
		Type: cmv1.CertificateConditionIssuing, Status: cmmeta.ConditionTrue, Reason: IssuerCAChangedReason,
		Message:            fmt.Sprintf("issued again from the current CA of %s, with the same key", caSecret),
		LastTransitionTime: &now, ObservedGeneration: cert.Generation,
	})
	_, err := h.CertManager.CertmanagerV1().Certificates(cert.Namespace).UpdateStatus(ctx, renewed, metav1.UpdateOptions{FieldManager: FieldManager})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return false, nil
	default:
		return false, fmt.Errorf("marking the Certificate %s/%s of a CA Issuing again: %w", cert.Namespace, cert.Name, err)
	}
}

// IssuerCAChangedReason is the reason of the Issuing condition renewCA sets.
const IssuerCAChangedReason = "IssuerCAChanged"

// caIssuerSecret is the Secret of the CA Issuer name of ours in ns, if it is one.
func (h *Host) caIssuerSecret(ns, name string) (string, bool) {
	issuer, err := h.Issuers.Issuers(ns).Get(name)
	if err != nil || issuer.Spec.CA == nil || issuer.Spec.CA.SecretName == "" {
		return "", false
	}
	return issuer.Spec.CA.SecretName, true
}

// signature is what ReissueStaleLeaves found for a leaf Secret at leafRV and its CA at caRV
// (its Secret's resourceVersion, or its certificate's fingerprint).
type signature struct {
	leafRV, caRV string
	stale        bool
}

// maxSignatures bounds the signature cache: past it, the cache starts over, so that the leaves
// of deleted setups do not stay in it forever.
const maxSignatures = 20000

// signatureCache maps a leaf Secret's namespace/name to its last signature check.
type signatureCache struct {
	mu      sync.Mutex
	entries map[string]signature
}

// notSignedBy is NotSignedBy for the Secret of a leaf and its CA's certificate (PEM) at
// caVersion (its Secret's resourceVersion, or its fingerprint), checked once per change of
// either.
func (h *Host) notSignedBy(leaf *corev1.Secret, caPEM []byte, caVersion string) bool {
	c := &h.signatures
	key := leaf.Namespace + "/" + leaf.Name
	c.mu.Lock()
	s, ok := c.entries[key]
	c.mu.Unlock()
	if ok && s.leafRV == leaf.ResourceVersion && s.caRV == caVersion {
		return s.stale
	}
	stale := NotSignedBy(leaf.Data["tls.crt"], caPEM)
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= maxSignatures {
		c.entries = map[string]signature{}
	}
	c.entries[key] = signature{leafRV: leaf.ResourceVersion, caRV: caVersion, stale: stale}
	c.mu.Unlock()
	return stale
}

// NotSignedBy reports whether the first certificate of leafChain is certainly not signed by
// the first certificate of caChain, both PEM. When either cannot be read, it cannot tell,
// and says false.
func NotSignedBy(leafChain, caChain []byte) bool {
	leaf, ca := firstCertificate(leafChain), firstCertificate(caChain)
	if leaf == nil || ca == nil {
		return false
	}
	// The signature alone, by the CA's key: whatever else the CA certificate says or lacks,
	// a leaf it signed is never called stale, so that no leaf is issued again and again.
	return ca.CheckSignature(leaf.SignatureAlgorithm, leaf.RawTBSCertificate, leaf.Signature) != nil
}

// firstCertificate parses the first PEM block of chain as a certificate, or returns nil.
func firstCertificate(chain []byte) *x509.Certificate {
	block, _ := pem.Decode(chain)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil
	}
	return c
}
