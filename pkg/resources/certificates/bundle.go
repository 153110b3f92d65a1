package certificates

import (
	"bytes"
	"encoding/pem"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// BundleKey is the key of the PEM bundle in a CA bundle Secret, as in cert-manager's Secrets,
// so that the components mount it like a CA's.
const BundleKey = "tls.crt"

// BundleSecret builds a Secret whose tls.crt concatenates the PEM blocks pems, in order,
// skipping empty ones: a CA bundle that components trust.
func BundleSecret(namespace, name string, labels map[string]string, pems ...[]byte) *corev1ac.SecretApplyConfiguration {
	return corev1ac.Secret(name, namespace).
		WithLabels(labels).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{BundleKey: Bundle(pems...)})
}

// Bundle concatenates the PEM blocks pems, in order, each ending in a newline, skipping
// empty ones. A bundle of bundles is the same bundle.
func Bundle(pems ...[]byte) []byte {
	var bundle bytes.Buffer
	for _, p := range pems {
		if len(bytes.TrimSpace(p)) == 0 {
			continue
		}
		bundle.Write(bytes.TrimSpace(p))
		bundle.WriteByte('\n')
	}
	return bundle.Bytes()
}

// ChainsBundle is the bundle of the certificate chains chains, in order, each certificate
// once: the chains of a root CA's two slots share what is above them (the namespace
// bootstrap, or the user's issuer). A chain that holds no PEM block is skipped; one whose
// blocks cannot be read is kept as it is, after the others.
func ChainsBundle(chains ...[]byte) []byte {
	if len(chains) == 1 {
		return Bundle(chains...)
	}
	seen := map[string]bool{}
	var blocks, unread [][]byte
	for _, chain := range chains {
		rest := chain
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			if seen[string(block.Bytes)] {
				continue
			}
			seen[string(block.Bytes)] = true
			blocks = append(blocks, pem.EncodeToMemory(block))
		}
		if len(bytes.TrimSpace(rest)) > 0 {
			unread = append(unread, rest)
		}
	}
	return Bundle(append(blocks, unread...)...)
}
