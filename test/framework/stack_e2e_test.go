//go:build e2e

package framework_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
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

// TestKwokNodeKeepsItsAddresses checks the local stack's own kwok stage
// (hack/tools/kwok/node-addresses.yaml). kube-apiserver port-forwards to a pod through
// its node's InternalIP; kwok's node-initialize, played again when the node is not Ready
// (as kube-controller-manager marks it when heartbeats lapse while kube-apiserver
// restarts), used to patch the addresses of a node without a Hostname address away.
func TestKwokNodeKeepsItsAddresses(t *testing.T) {
	want := "InternalIP=127.0.0.1 Hostname=" + framework.FakeNode + " "
	addresses := func() string {
		return kubectl(t, "get", "node", framework.FakeNode, "-o", `jsonpath={range .status.addresses[*]}{.type}={.address} {end}`)
	}
	ready := func() string {
		return kubectl(t, "get", "node", framework.FakeNode, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
	}
	require.Equal(t, want, addresses())

	// What kube-controller-manager does to a node whose heartbeats lapse.
	kubectl(t, "patch", "node", framework.FakeNode, "--subresource=status", "--type=strategic", "-p",
		`{"status":{"conditions":[{"type":"Ready","status":"Unknown","reason":"NodeStatusUnknown","message":"Kubelet stopped posting node status."}]}}`)
	require.Eventually(t, func() bool { return ready() == "True" }, time.Minute, 200*time.Millisecond, "the node turns Ready again")
	assert.Equal(t, want, addresses(), "the node kept its addresses")

	// A node that lost them gets them back.
	kubectl(t, "patch", "node", framework.FakeNode, "--subresource=status", "--type=json", "-p", `[{"op":"remove","path":"/status/addresses"}]`)
	assert.Eventually(t, func() bool { return addresses() == want }, time.Minute, 200*time.Millisecond, "the node's addresses come back")
	assert.Equal(t, "True", ready())
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

// TestKubectlVersion checks that the pinned kube binaries carry their version, as
// Kubernetes' own build stamps it (hack/tools/build.sh): `kubectl version` answers the pinned
// release for client and server, and exits 0, which it does not for a version it cannot
// parse.
func TestKubectlVersion(t *testing.T) {
	goMod, err := os.ReadFile(filepath.Join("..", "..", "hack", "tools", "kube", "go.mod"))
	require.NoError(t, err)
	pin := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes (v\d+\.\d+\.\d+)\b`).FindSubmatch(goMod)
	require.NotNil(t, pin, "hack/tools/kube/go.mod pins k8s.io/kubernetes")

	var versions struct {
		ClientVersion, ServerVersion struct{ GitVersion, Major, Minor string }
	}
	require.NoError(t, json.Unmarshal([]byte(kubectl(t, "version", "-o", "json")), &versions))
	for _, v := range []struct{ GitVersion, Major, Minor string }{versions.ClientVersion, versions.ServerVersion} {
		assert.Equal(t, string(pin[1]), v.GitVersion)
		assert.Equal(t, strings.Split(strings.TrimPrefix(v.GitVersion, "v"), ".")[:2], []string{v.Major, v.Minor})
	}
	// The plain form too: it fails when it cannot parse either version.
	assert.Contains(t, kubectl(t, "version"), "Server Version: "+string(pin[1]))
}
