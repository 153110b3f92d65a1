package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kcpOperatorV09CAs are the CAs kcp-operator v0.9 makes for a RootShard root: the root CA
// from the user's issuer and four intermediates. It makes no front-proxy-client CA any more.
var kcpOperatorV09CAs = []string{"root-ca", "root-server-ca", "root-requestheader-client-ca", "root-client-ca", "root-service-account-ca"}

// plantedCA is a self-signed CA certificate of a key of mallory's, as a kubernetes.io/tls
// Secret's data, with the certificate and key themselves.
func plantedCA(t *testing.T, cn string) (crtPEM, keyPEM []byte, crt *x509.Certificate, key *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	crt, err = x509.ParseCertificate(der)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), crt, key
}

// forgedAdmin is a client certificate CN=forged-admin, O=system:masters, signed by ca's key.
func forgedAdmin(t *testing.T, ca *x509.Certificate, caKey any) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:     pkix.Name{CommonName: "forged-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	require.NoError(t, err)
	c, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return c
}

// publicKeyOf is the DER of the public key of the first certificate of a PEM bundle.
func publicKeyOf(t *testing.T, bundle []byte) string {
	t.Helper()
	certs := certsIn(bundle)
	require.NotEmpty(t, certs)
	return base64.StdEncoding.EncodeToString(certs[0].RawSubjectPublicKeyInfo)
}

// TestAdoptionKeepsNoPlantedKey plays issue 38's attack on a takeover and a rotation with
// kubectl and real RBAC. mallory may only create Secrets in the namespace; she plants
// root-front-proxy-client-ca, a CA of her key labelled as kcp-operator's Certificates' Secrets
// are, before the admin's takeover of a kcp-operator v0.9 setup (which has no such CA), and
// root-front-proxy-client-ca-next, labelled as the server's own, before the admin starts a
// rotation of the front-proxy-client CA. Neither is taken over: the setup says NameConflict
// naming it, and once the admin deletes it, the CA issued after the takeover and after the
// rotation carries a key of its own, never hers, and a certificate CN=forged-admin,
// O=system:masters that she signs verifies against no bundle of the setup. The takeover
// keeps kcp-operator's CA keys and ends once the RootShard is Available (TakenOver);
// eve, an editor of the namespace, is refused (422) a Kubeconfig whose Secret is one of the
// root CA's rotation slots.
func TestAdoptionKeepsNoPlantedKey(t *testing.T) {
	parallel(t, sharedRoles)
	withSelfServiceRoles(t)
	ns := namespace(t, "tenant-adoption")
	kubectl(t, "create", "role", "plant-secrets", "-n", ns, "--verb=create", "--resource=secrets")
	kubectl(t, "create", "rolebinding", "plant-secrets", "-n", ns, "--role=plant-secrets", "--user=mallory")
	kubectl(t, "create", "rolebinding", "setups", "-n", ns, "--clusterrole=kcp-setups-edit", "--user=eve")
	kubectl(t, "create", "rolebinding", "mint", "-n", ns, "--clusterrole=kcp-setups-kubeconfig", "--user=eve")
	mallory, err := stack.UserKubeconfig("mallory")
	require.NoError(t, err)
	eve, err := stack.UserKubeconfig("eve")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		m, _, _ := stack.KubectlWith(t.Context(), mallory, "auth", "can-i", "create", "secrets", "-n", ns)
		e, _, _ := stack.KubectlWith(t.Context(), eve, "auth", "can-i", "create", "kubeconfigs.operator.kcp.io", "-n", ns)
		return strings.TrimSpace(m) == "yes" && strings.TrimSpace(e) == "yes"
	}, time.Minute, time.Second, "the bindings reach the authorizer")
	out, _, _ := stack.KubectlWith(t.Context(), mallory, "auth", "can-i", "get", "secrets", "-n", ns)
	require.Equal(t, "no", strings.TrimSpace(out), "mallory may only create Secrets")

	// kcp-operator v0.9's CAs for the RootShard root, orphaned.
	var setup strings.Builder
	setup.WriteString("apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: selfsigned}\nspec: {selfSigned: {}}\n---\n")
	for i, ca := range kcpOperatorV09CAs {
		issuer := "root-ca"
		if i == 0 {
			issuer = "selfsigned"
		}
		setup.WriteString(kcpOperatorCertificate(ca, issuer, "Issuer", "root", "rootshard", "{operator.kcp.io/rootshard: root}", "  isCA: true\n"))
		fmt.Fprintf(&setup, "apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: %s, labels: %s}\nspec: {ca: {secretName: %s}}\n---\n",
			ca, kcpOperatorLabels("root", "rootshard"), ca)
	}
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, setup.String()))
	kubectl(t, "wait", "-n", ns, "--for=condition=Ready", "certificate", "--all", "--timeout=3m")
	keys := map[string]string{}
	for _, ca := range kcpOperatorV09CAs {
		keys[ca] = keyDigest(t, ns, ca)
	}

	plant := func(name, labels string) (*x509.Certificate, *ecdsa.PrivateKey, string) {
		crtPEM, keyPEM, crt, key := plantedCA(t, name)
		manifest := fmt.Sprintf(`apiVersion: v1
kind: Secret
type: kubernetes.io/tls
metadata:
  name: %s
  labels: %s
  annotations: {cert-manager.io/certificate-name: %s}
data: {tls.crt: %s, tls.key: %s}
`, name, labels, name, base64.StdEncoding.EncodeToString(crtPEM), base64.StdEncoding.EncodeToString(keyPEM))
		_, stderr, err := stack.KubectlWith(t.Context(), mallory, "create", "-n", ns, "-f", writeManifest(t, manifest))
		require.NoError(t, err, stderr)
		return crt, key, publicKeyOf(t, crtPEM)
	}
	// The CA a minted kubeconfig's certificate comes from, whose key she would hold.
	plantedCrt, plantedKey, plantedPub := plant("root-front-proxy-client-ca", "{operator.kcp.io/rootshard: root}")

	// The admin's takeover: the RootShard created with the annotation.
	rootShard := strings.Replace(strings.SplitN(kcpOperatorManifests, "---\n", 2)[0], "  name: root\n",
		"  name: root\n  annotations: {operator.kcp.io/adopt: kcp-operator}\n", 1)
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, rootShard))
	waitForReason(t, ns, "rootshard/root", "Synced", "False", "NameConflict")
	msg := conditionMessage(t, stack, ns, "rootshard/root", "Synced")
	assert.Contains(t, msg, "Secret "+ns+"/root-front-proxy-client-ca")
	assert.Contains(t, msg, "not taken over")
	assert.Equal(t, plantedPub, publicKeyOf(t, readSecret(t, stack, ns, "root-front-proxy-client-ca", "tls.crt")),
		"her Secret is not written")
	kubectl(t, "delete", "secret", "root-front-proxy-client-ca", "-n", ns)
	if _, err := stack.Kubectl(t.Context(), "wait", "-n", ns, "--for=condition=Available", "rootshard/root", "--timeout=3m"); err != nil {
		certs, _ := stack.Kubectl(t.Context(), "get", "certificates,certificaterequests", "-n", ns, "-o",
			`jsonpath={range .items[*]}{.kind} {.metadata.name} {.spec.privateKey} {.status.conditions}{"\n"}{end}`)
		t.Fatalf("root is not Available: %s\n%s", kubectl(t, "get", "rootshard/root", "-n", ns, "-o", "jsonpath={.status.conditions}"), certs)
	}
	kubectl(t, "wait", "-n", ns, "--for=condition=TakenOver", "rootshard/root", "--timeout=1m")
	for _, ca := range kcpOperatorV09CAs {
		assert.Equal(t, keys[ca], keyDigest(t, ns, ca), "%s keeps kcp-operator's key", ca)
	}
	kubectl(t, "wait", "-n", ns, "--for=condition=Ready", "certificate/root-front-proxy-client-ca", "--timeout=2m")
	assert.NotEqual(t, plantedPub, publicKeyOf(t, readSecret(t, stack, ns, "root-front-proxy-client-ca", "tls.crt")),
		"the CA issued after the takeover has a key of its own")

	// Before a rotation: her CA under the new slot's name, labelled as the server's own.
	plantedNext, plantedNextKey, plantedNextPub := plant("root-front-proxy-client-ca-next",
		"{app.kubernetes.io/managed-by: kcp-setups, app.kubernetes.io/instance: root, app.kubernetes.io/component: front-proxy-client-ca, operator.kcp.io/rootshard: root}")
	_, stderr, err := rotate(t, ns, "rootshards", "root", "Start", "front-proxy-client")
	require.NoError(t, err, stderr)
	require.Eventually(t, func() bool {
		m := conditionMessage(t, stack, ns, "rootshard/root", "Synced")
		return strings.Contains(m, "Secret "+ns+"/root-front-proxy-client-ca-next")
	}, 2*time.Minute, time.Second, "the planted slot is a NameConflict")
	assert.Equal(t, plantedNextPub, publicKeyOf(t, readSecret(t, stack, ns, "root-front-proxy-client-ca-next", "tls.crt")),
		"her Secret is not written")
	kubectl(t, "delete", "secret", "root-front-proxy-client-ca-next", "-n", ns)
	waitForRotation(t, ns, "root", "Prepared", "front-proxy-client")
	assert.NotEqual(t, plantedNextPub, publicKeyOf(t, readSecret(t, stack, ns, "root-front-proxy-client-ca-next", "tls.crt")),
		"the CA issued by the rotation has a key of its own")

	// What she signs verifies against no client CA bundle of the setup; what the new CA signs does.
	bundle := certPool(t, readSecret(t, stack, ns, "root-merged-client-ca", "tls.crt"))
	verify := func(c *x509.Certificate) error {
		_, err := c.Verify(x509.VerifyOptions{Roots: bundle, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		return err
	}
	assert.Error(t, verify(forgedAdmin(t, plantedCrt, plantedKey)), "a certificate mallory signs for the takeover's CA name is not trusted")
	assert.Error(t, verify(forgedAdmin(t, plantedNext, plantedNextKey)), "a certificate mallory signs for the rotation's slot is not trusted")
	next := certsIn(readSecret(t, stack, ns, "root-front-proxy-client-ca-next", "tls.crt"))[0]
	block, _ := pem.Decode(readSecret(t, stack, ns, "root-front-proxy-client-ca-next", "tls.key"))
	require.NotNil(t, block)
	nextKey, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	require.NoError(t, err)
	assert.NoError(t, verify(forgedAdmin(t, next, nextKey)), "the check can succeed: the rotation's own CA is trusted")

	// eve may edit the namespace's setups, but no Kubeconfig of hers takes a rotation slot.
	for _, slot := range []string{"root-ca-next", "root-ca-trust", "root-front-proxy-client-ca-trust"} {
		_, stderr, err := stack.KubectlWith(t.Context(), eve, "create", "-n", ns, "-f", writeManifest(t, fmt.Sprintf(`apiVersion: operator.kcp.io/v1alpha1
kind: Kubeconfig
metadata:
  name: steal
spec:
  target: {rootShardRef: {name: root}}
  username: eve
  validity: 24h
  secretRef: {name: %s}
`, slot)))
		require.Error(t, err, slot)
		assert.Contains(t, stderr, `The Kubeconfig "steal" is invalid`, slot)
		assert.Contains(t, stderr, "spec.secretRef.name", slot)
		assert.Contains(t, stderr, `"`+slot+`"`, slot)
		_, err = stack.Kubectl(t.Context(), "get", "kubeconfig/steal", "-n", ns)
		assert.Error(t, err, "nothing is stored")
	}
}
