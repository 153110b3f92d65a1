package e2e

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

// secretCert reads and parses the certificate in tls.crt of a Secret.
func secretCert(t *testing.T, ns, name string) *x509.Certificate {
	t.Helper()
	return secretCertOn(t, stackOf(t), ns, name)
}

// secretCertOn is secretCert on the stack s.
func secretCertOn(t *testing.T, s *framework.Stack, ns, name string) *x509.Certificate {
	t.Helper()
	return parseCert(t, decodeSecretOn(t, s, ns, name, "tls.crt"))
}

// parseCert parses the first PEM certificate of data.
func parseCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(data)
	require.NotNil(t, block, "no PEM certificate")
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return cert
}

// verifyChain checks that leaf chains to intermediate and on to root.
func verifyChain(t *testing.T, leaf, intermediate, root *x509.Certificate, usage x509.ExtKeyUsage) {
	t.Helper()
	roots, inters := x509.NewCertPool(), x509.NewCertPool()
	roots.AddCert(root)
	inters.AddCert(intermediate)
	_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inters, KeyUsages: []x509.ExtKeyUsage{usage}})
	assert.NoError(t, err, "%s does not chain to %s and %s", leaf.Subject, intermediate.Subject, root.Subject)
}

func waitFor(t *testing.T, ns, object, condition string) {
	t.Helper()
	waitForOn(t, stackOf(t), ns, object, condition)
}

// waitForOn is waitFor on the stack s.
func waitForOn(t *testing.T, s *framework.Stack, ns, object, condition string) {
	t.Helper()
	kubectlOn(t, s, "wait", "-n", ns, "--for=condition="+condition, object, "--timeout=3m")
}

func TestRootShardPKIFromTheNamespaceBootstrap(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "pki-bootstrap")
	givenRootShard(t, ns, until("CertificatesReady"))

	out := kubectl(t, "get", "certificates", "-n", ns, "-o", "name")
	for _, want := range []string{"kcp-pki-ca", "root-ca", "root-server-ca", "root-client-ca", "root-front-proxy-client-ca",
		"root-requestheader-client-ca", "root-service-account-ca", "root-server", "root-client", "root-service-account",
		"root-logical-cluster-admin", "root-external-logical-cluster-admin"} {
		assert.Contains(t, out, "certificate.cert-manager.io/"+want+"\n")
	}
	out = kubectl(t, "get", "issuers", "-n", ns, "-o", "name")
	for _, want := range []string{"kcp-pki-bootstrap", "kcp-pki-ca", "root-ca", "root-server-ca", "root-client-ca",
		"root-front-proxy-client-ca", "root-requestheader-client-ca", "root-service-account-ca"} {
		assert.Contains(t, out, "issuer.cert-manager.io/"+want+"\n")
	}

	bootstrap := secretCert(t, ns, "kcp-pki-ca")
	root := secretCert(t, ns, "root-ca")
	serverCA := secretCert(t, ns, "root-server-ca")
	clientCA := secretCert(t, ns, "root-client-ca")
	require.NoError(t, root.CheckSignatureFrom(bootstrap), "root-ca is signed by the namespace bootstrap CA")
	for _, ca := range []string{"root-server-ca", "root-client-ca", "root-front-proxy-client-ca", "root-requestheader-client-ca", "root-service-account-ca"} {
		c := secretCert(t, ns, ca)
		assert.True(t, c.IsCA, ca)
		assert.NoError(t, c.CheckSignatureFrom(root), "%s is signed by root-ca", ca)
	}

	server := secretCert(t, ns, "root-server")
	verifyChain(t, server, serverCA, root, x509.ExtKeyUsageServerAuth)
	assert.Contains(t, server.DNSNames, "root-kcp."+ns+".svc.cluster.local")
	assert.Contains(t, server.DNSNames, "kcp.example.com")
	assert.Equal(t, x509.ECDSA, server.PublicKeyAlgorithm, "ECDSA P-256 by default")

	admin := secretCert(t, ns, "root-logical-cluster-admin")
	verifyChain(t, admin, clientCA, root, x509.ExtKeyUsageClientAuth)
	assert.Equal(t, "logical-cluster-admin", admin.Subject.CommonName)
	assert.Equal(t, []string{"system:kcp:logical-cluster-admin"}, admin.Subject.Organization)

	// kwok runs the Deployment's pods, so the RootShard becomes Available and Running.
	waitFor(t, ns, "rootshard/root", "Available")
	out = kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", "jsonpath={.status.phase} {.status.observedGeneration} {.metadata.finalizers}")
	assert.Equal(t, `Running 1 ["operator.kcp.io/rootshard-cleanup"]`, out)

	args := kubectl(t, "get", "deployment", "root-kcp", "-n", ns, "-o", `jsonpath={range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}`)
	for _, want := range []string{"start", "--root-ca-file=/etc/kcp/tls/ca/root/tls.crt", "--client-ca-file=/etc/kcp/tls/ca/client/tls.crt",
		"--tls-cert-file=/etc/kcp/tls/server/tls.crt", "--shard-base-url=https://root-kcp." + ns + ".svc.cluster.local:6443",
		"--shard-external-url=https://kcp.example.com:6443", "--etcd-servers=https://etcd.example.com:2379", "--batteries-included=workspace-types"} {
		assert.Contains(t, nonEmptyLines(args), want)
	}
	mountPaths := kubectl(t, "get", "deployment", "root-kcp", "-n", ns, "-o", `jsonpath={range .spec.template.spec.containers[0].volumeMounts[*]}{.mountPath}={.readOnly}{"\n"}{end}`)
	for _, want := range []string{"/etc/kcp/tls/ca/root=true", "/etc/kcp/tls/ca/client=true", "/etc/kcp/tls/server=true",
		"/etc/kcp/logical-cluster-admin-kubeconfig=true", "/etc/kcp/external-logical-cluster-admin-kubeconfig=true"} {
		assert.Contains(t, nonEmptyLines(mountPaths), want)
	}
	assert.Contains(t, kubectl(t, "get", "service", "root-kcp", "-n", ns, "-o", "jsonpath={.spec.ports[0].port}"), "6443")

	// The merged client CA trusts both the components' and the users' client CA.
	bundle := kubectl(t, "get", "secret", "root-merged-client-ca", "-n", ns, "-o", "jsonpath={.data.tls\\.crt}")
	data, err := base64.StdEncoding.DecodeString(bundle)
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(data), "BEGIN CERTIFICATE"))

	// Deleting the last RootShard of the namespace removes all it had, and the bootstrap.
	kubectl(t, "delete", "rootshard", "root", "-n", ns, "--timeout=2m")
	for _, kind := range []string{"deployments", "services", "configmaps", "certificates", "issuers", "secrets"} {
		out := kubectl(t, "get", kind, "-n", ns, "-l", "app.kubernetes.io/managed-by=kcp-setups", "-o", "name")
		assert.Empty(t, strings.TrimSpace(out), "%s left behind", kind)
	}
}

func TestRootShardUsesTheUsersIssuer(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "pki-issuer")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, `apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: self
spec:
  selfSigned: {}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: corp-ca
spec:
  isCA: true
  commonName: corp-ca
  secretName: corp-ca
  privateKey: {algorithm: ECDSA, size: 256}
  issuerRef: {name: self, kind: Issuer}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: corp
spec:
  ca: {secretName: corp-ca}
`))
	givenRootShard(t, ns, named("corp-root"), withSpec(`  certificates:
    issuerRef:
      name: corp
`), until("CertificatesReady"))

	assert.Equal(t, "corp", kubectl(t, "get", "certificate", "corp-root-ca", "-n", ns, "-o", "jsonpath={.spec.issuerRef.name}"))
	corp := secretCert(t, ns, "corp-ca")
	root := secretCert(t, ns, "corp-root-ca")
	assert.NoError(t, root.CheckSignatureFrom(corp), "the root CA is signed by the user's issuer")
	out := kubectl(t, "get", "issuers", "-n", ns, "-o", "name")
	assert.NotContains(t, out, "kcp-pki-bootstrap", "no bootstrap PKI when the user brings an issuer")
}
