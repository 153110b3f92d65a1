package e2e

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// virtualWorkspacesManifest is a Shard and the RootShard's, each served by its own
// VirtualWorkspace, and a FrontProxy.
const virtualWorkspacesManifest = `apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: shard-1
spec:
  rootShard: {ref: {name: root}}
  etcd: {endpoints: ["https://etcd-shard:2379"]}
  kcpVirtualWorkspace: {name: shard-vw}
---
apiVersion: operator.kcp.io/v1alpha1
kind: VirtualWorkspace
metadata:
  name: root-vw
spec:
  target: {rootShardRef: {name: root}}
  external: {hostname: vw.example.com, port: 8443}
---
apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata:
  name: edge
spec:
  rootShard: {ref: {name: root}}
  external: {hostname: edge.example.com, port: 443}
`

const shardVirtualWorkspaceManifest = `apiVersion: operator.kcp.io/v1alpha1
kind: VirtualWorkspace
metadata:
  name: shard-vw
spec:
  target: {shardRef: {name: shard-1}}
  external: {hostname: shard-vw.example.com}
`

// deploymentArgs are the arguments of a Deployment's first container, one per line.
func deploymentArgs(t *testing.T, ns, name string) []string {
	t.Helper()
	return nonEmptyLines(kubectl(t, "get", "deployment", name, "-n", ns, "-o", `jsonpath={range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}`))
}

// referenceValid is an object's ReferenceValid condition as status/reason.
func referenceValid(t *testing.T, ns, object string) string {
	out, _ := stack.Kubectl(t.Context(), "get", object, "-n", ns,
		"-o", `jsonpath={.status.conditions[?(@.type=="ReferenceValid")].status}/{.status.conditions[?(@.type=="ReferenceValid")].reason}`)
	return out
}

// TestVirtualWorkspaces realizes a RootShard and a Shard that each run their virtual
// workspaces in a VirtualWorkspace of their own, and a FrontProxy: every new certificate
// chains to the RootShard's CA, the shards' flags point at their virtual workspace server,
// the front proxy's /services/ mapping at the root shard's. The Shard's VirtualWorkspace
// comes last: the Shard waits for it, deleting it leaves nothing labelled and the Shard says
// its reference is missing, and it heals when the VirtualWorkspace is back.
func TestVirtualWorkspaces(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "virtual-workspaces")
	givenRootShard(t, ns, withSpec("  kcpVirtualWorkspace: {name: root-vw}\n"), withObjects(virtualWorkspacesManifest), until())
	require.Eventually(t, func() bool { return referenceValid(t, ns, "shard/shard-1") == "False/VirtualWorkspaceNotFound" },
		2*time.Minute, time.Second, "a Shard whose VirtualWorkspace does not exist says so")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, shardVirtualWorkspaceManifest))
	for _, object := range []string{"virtualworkspace/root-vw", "virtualworkspace/shard-vw", "rootshard/root", "shard/shard-1", "frontproxy/edge"} {
		waitFor(t, ns, object, "ReferenceValid")
		waitFor(t, ns, object, "Available")
	}

	// kubectl shows where each serves.
	table := kubectl(t, "get", "virtualworkspaces", "-n", ns)
	for _, column := range []string{"TARGET", "URL", "PHASE", "AGE"} {
		assert.Contains(t, lineWith(t, table, "NAME"), column)
	}
	assert.Contains(t, lineWith(t, table, "root-vw"), "https://vw.example.com:8443")
	shardVWURL := "https://shard-vw.example.com:6443"
	assert.Contains(t, lineWith(t, table, "shard-vw"), shardVWURL)
	assert.Contains(t, kubectl(t, "get", "kcp", "-n", ns, "-o", "name"), "virtualworkspace.operator.kcp.io/root-vw", "in the kcp category")

	// Certificates: serving from the server CA, client identities from the client CA.
	root, serverCA, clientCA := secretCert(t, ns, "root-ca"), secretCert(t, ns, "root-server-ca"), secretCert(t, ns, "root-client-ca")
	for _, vw := range []string{"root-vw", "shard-vw"} {
		server := secretCert(t, ns, vw+"-virtual-workspace-server")
		verifyChain(t, server, serverCA, root, x509.ExtKeyUsageServerAuth)
		assert.Contains(t, server.DNSNames, vw+"-virtual-workspace."+ns+".svc.cluster.local")
		assert.Contains(t, server.DNSNames, "localhost")
		client := secretCert(t, ns, vw+"-virtual-workspace-client")
		verifyChain(t, client, clientCA, root, x509.ExtKeyUsageClientAuth)
		assert.Equal(t, vw+"-virtual-workspace", client.Subject.CommonName)
	}
	assert.Contains(t, secretCert(t, ns, "root-vw-virtual-workspace-server").DNSNames, "vw.example.com")

	// The shards run without their own virtual workspaces and point at their server.
	caFile := "--shard-virtual-workspace-ca-file=/etc/kcp/tls/ca/server/tls.crt"
	rootArgs := deploymentArgs(t, ns, "root-kcp")
	for _, want := range []string{"--run-virtual-workspaces=false", "--shard-virtual-workspace-url=https://vw.example.com:8443", caFile} {
		assert.Contains(t, rootArgs, want)
	}
	shardArgs := deploymentArgs(t, ns, "shard-1-shard-kcp")
	for _, want := range []string{"--run-virtual-workspaces=false", "--shard-virtual-workspace-url=" + shardVWURL, caFile} {
		assert.Contains(t, shardArgs, want)
	}
	// Each server talks to its own target.
	assert.Equal(t, "/virtual-workspaces", kubectl(t, "get", "deployment", "shard-vw-virtual-workspace", "-n", ns, "-o", "jsonpath={.spec.template.spec.containers[0].command[0]}"))
	kubeconfig := decodeSecret(t, ns, "shard-vw-virtual-workspace-kubeconfig", "kubeconfig")
	assert.Contains(t, string(kubeconfig), "server: https://shard-1-shard-kcp."+ns+".svc.cluster.local:6443")
	vwArgs := deploymentArgs(t, ns, "shard-vw-virtual-workspace")
	assert.Contains(t, vwArgs, "--requestheader-allowed-names=kcp-front-proxy,kcp-root-shard-proxy")
	assert.Contains(t, strings.Join(vwArgs, "\n"), "--kubeconfig=")

	// The front proxy sends /services/ to the root shard's virtual workspace server.
	mapping := frontProxyMapping(t, ns, "edge-config")
	assert.Equal(t, "https://root-vw-virtual-workspace."+ns+".svc.cluster.local:6443", mapping["/services/"].Backend, "mappings: %v", mapping)

	// Deleting the Shard's VirtualWorkspace takes everything of it, and the Shard says so.
	kubectl(t, "delete", "virtualworkspace", "shard-vw", "-n", ns, "--timeout=2m")
	for _, kind := range []string{"deployments", "services", "poddisruptionbudgets", "certificates", "secrets"} {
		out := kubectl(t, "get", kind, "-n", ns, "-l", "operator.kcp.io/virtualworkspace=shard-vw", "-o", "name")
		assert.Empty(t, strings.TrimSpace(out), "%s of the virtual workspace left behind", kind)
	}
	require.Eventually(t, func() bool { return referenceValid(t, ns, "shard/shard-1") == "False/VirtualWorkspaceNotFound" },
		time.Minute, time.Second, "the Shard reports the missing VirtualWorkspace")
	assert.Eventually(t, func() bool {
		out, _ := stack.Kubectl(t.Context(), "get", "events", "-n", ns, "--field-selector", "involvedObject.name=shard-1", "-o", "jsonpath={.items[*].reason}")
		return strings.Contains(out, "VirtualWorkspaceNotFound")
	}, 30*time.Second, time.Second, "an Event says what the Shard misses")
	assert.NotEmpty(t, kubectl(t, "get", "deployment", "root-vw-virtual-workspace", "-n", ns, "-o", "name"), "the other VirtualWorkspace stays")

	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, shardVirtualWorkspaceManifest))
	waitFor(t, ns, "shard/shard-1", "ReferenceValid")
}
