package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestKwokRunsPods checks the fake node: a Deployment's pods are scheduled on it and turn
// Running and Ready, as the controllers' Deployments will.
func TestKwokRunsPods(t *testing.T) {
	ns := namespace(t, "kwok")
	kubectl(t, "create", "deployment", "web", "-n", ns, "--image=registry.example.com/web:1", "--replicas=2")
	kubectl(t, "rollout", "status", "deployment/web", "-n", ns, "--timeout=2m")
	out := kubectl(t, "get", "pods", "-n", ns, "-o", "jsonpath={range .items[*]}{.spec.nodeName} {.status.phase}{\"\\n\"}{end}")
	assert.Equal(t, []string{"kwok-node-0 Running", "kwok-node-0 Running"}, nonEmptyLines(out))
}

// TestCertManagerIssues checks cert-manager: a self-signed CA issues a CA Issuer's
// certificate, as the controllers' PKI will need.
func TestCertManagerIssues(t *testing.T) {
	ns := namespace(t, "certs")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, `apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: bootstrap
spec:
  selfSigned: {}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: ca
spec:
  isCA: true
  commonName: test-ca
  secretName: ca
  privateKey: {algorithm: ECDSA, size: 256}
  issuerRef: {name: bootstrap, kind: Issuer}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: ca
spec:
  ca: {secretName: ca}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: leaf
spec:
  commonName: leaf
  dnsNames: [leaf.example.com]
  secretName: leaf
  privateKey: {algorithm: ECDSA, size: 256}
  issuerRef: {name: ca, kind: Issuer}
`))
	kubectl(t, "wait", "-n", ns, "--for=condition=Ready", "certificate/ca", "certificate/leaf", "--timeout=2m")
	out := kubectl(t, "get", "secret", "leaf", "-n", ns, "-o", "jsonpath={.data.ca\\.crt}")
	assert.NotEmpty(t, out, "the leaf's Secret carries its CA")
}
