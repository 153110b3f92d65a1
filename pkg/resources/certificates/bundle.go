package certificates

import (
	"bytes"

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
