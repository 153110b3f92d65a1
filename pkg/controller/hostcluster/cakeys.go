package hostcluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// claimIssuedSecret claims the Secret cert-manager issues the desired Certificate o into,
// with the Certificate's first write: a Secret of that name the controllers did not create
// would be overwritten by it, and deleted with the setup. A Secret of ours must carry the
// owner's UID: cert-manager would issue the Certificate around the key of a Secret that
// merely carries our labels. A CA taken over from kcp-operator (adoptableSecret) keeps its
// key, whatever its algorithm.
func (h *Host) claimIssuedSecret(ctx context.Context, o *cmapply.CertificateApplyConfiguration) error {
	if o.Spec == nil || o.Spec.SecretName == nil {
		return nil
	}
	var labels map[string]string
	if t := o.Spec.SecretTemplate; t != nil {
		labels = t.Labels
	}
	adopted, err := claim(ctx, "Secret", *o.Namespace, *o.Spec.SecretName, labels, h.SecretApplier.Lookup,
		func(ctx context.Context, existing metav1.Object) (bool, string) {
			return h.adoptableSecret(ctx, *o.Name, existing)
		}, true)
	if s, ok := adopted.(*corev1.Secret); ok && err == nil {
		// Its Secret is the one kcp-operator's Certificate was issued into.
		keepKey(o, s.Data)
	}
	return err
}

// keepCAKey has the desired CA Certificate o keep the key of the CA it renews: only the key
// of the owner's own CA Secret, marked with its UID; until the cache holds that Secret (a CA
// just taken over, whose Secret gets our labels from cert-manager), the key the Certificate
// last asked for.
func (h *Host) keepCAKey(ctx context.Context, o *cmapply.CertificateApplyConfiguration) {
	if o.Spec == nil || o.Spec.SecretName == nil || o.Spec.IsCA == nil || !*o.Spec.IsCA {
		return
	}
	var labels map[string]string
	if t := o.Spec.SecretTemplate; t != nil {
		labels = t.Labels
	}
	s, err := h.Secrets.Secrets(*o.Namespace).Get(*o.Spec.SecretName)
	if err == nil {
		if ownMarked(ctx, s, labels) {
			keepKey(o, s.Data)
		}
		return
	}
	if cert, err := h.Certificates.Certificates(*o.Namespace).Get(*o.Name); err == nil && ownMarked(ctx, cert, o.Labels) {
		keepAskedKey(o, cert.Spec.PrivateKey)
	}
}

// keepKey has a CA Certificate that keeps its key on renewal (rotationPolicy Never) ask for
// the key its Secret holds: the algorithm and size of its certificate's public key, and the
// encoding of its tls.key (read from the PEM block's type alone). cert-manager renews such a
// CA only with a key that matches the spec, never makes another, and would re-encode it. A
// CA's key changes by rotation alone.
func keepKey(o *cmapply.CertificateApplyConfiguration, data map[string][]byte) {
	pk := o.Spec.PrivateKey
	if pk == nil || pk.RotationPolicy == nil || *pk.RotationPolicy != cmv1.RotationPolicyNever {
		return
	}
	algorithm, size, ok := keyOf(data[corev1.TLSCertKey])
	if !ok {
		return
	}
	pk.WithAlgorithm(algorithm)
	pk.Size = nil
	if size > 0 {
		pk.WithSize(size)
	}
	if encoding, ok := keyEncoding(data[corev1.TLSPrivateKeyKey]); ok {
		pk.WithEncoding(encoding)
	}
}

// keepAskedKey has a CA Certificate that keeps its key on renewal ask for the key asked
// before (asked, the Certificate as the cache holds it), as keepKey does from its Secret.
func keepAskedKey(o *cmapply.CertificateApplyConfiguration, asked *cmv1.CertificatePrivateKey) {
	pk := o.Spec.PrivateKey
	if asked == nil || pk == nil || pk.RotationPolicy == nil || *pk.RotationPolicy != cmv1.RotationPolicyNever || asked.Algorithm == "" {
		return
	}
	pk.WithAlgorithm(asked.Algorithm)
	pk.Size = nil
	if asked.Size > 0 {
		pk.WithSize(asked.Size)
	}
	if asked.Encoding != "" {
		pk.WithEncoding(asked.Encoding)
	}
}

// keyEncoding is cert-manager's name of the encoding of a PEM private key, from the PEM
// block's type alone: PKCS1 for RSA's and EC's own forms, PKCS8 for the generic one.
func keyEncoding(keyPEM []byte) (cmv1.PrivateKeyEncoding, bool) {
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return "", false
	}
	switch block.Type {
	case "RSA PRIVATE KEY", "EC PRIVATE KEY":
		return cmv1.PKCS1, true
	case "PRIVATE KEY":
		return cmv1.PKCS8, true
	}
	return "", false
}

// keyOf is the private key algorithm and size of the key a PEM certificate holds the public
// half of, as cert-manager names them.
func keyOf(certPEM []byte) (cmv1.PrivateKeyAlgorithm, int, bool) {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return "", 0, false
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", 0, false
	}
	switch k := cert.PublicKey.(type) {
	case *rsa.PublicKey:
		return cmv1.RSAKeyAlgorithm, k.N.BitLen(), true
	case *ecdsa.PublicKey:
		return cmv1.ECDSAKeyAlgorithm, k.Curve.Params().BitSize, true
	case ed25519.PublicKey:
		return cmv1.Ed25519KeyAlgorithm, 0, true
	}
	return "", 0, false
}
