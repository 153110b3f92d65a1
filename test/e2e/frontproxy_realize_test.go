package e2e

import (
	"crypto/x509"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFrontProxy realizes a FrontProxy of a RootShard: its certificates chain to the
// RootShard's CAs, its Deployment has the documented flags and mounts, its path mappings
// route to the root shard, and deleting it removes what it had and nothing else.
func TestFrontProxy(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "front-proxy")
	givenRootShard(t, ns, until())
	givenFrontProxy(t, ns, withSpec(`  auth: {dropGroups: ["system:masters"]}
`))
	assert.Equal(t, "Running", kubectl(t, "get", "frontproxy", "edge", "-n", ns, "-o", "jsonpath={.status.phase}"))

	root, serverCA := secretCert(t, ns, "root-ca"), secretCert(t, ns, "root-server-ca")
	server := secretCert(t, ns, "root-edge-server")
	verifyChain(t, server, serverCA, root, x509.ExtKeyUsageServerAuth)
	assert.Contains(t, server.DNSNames, "edge.example.com")
	assert.Contains(t, server.DNSNames, "kcp.example.com")
	verifyChain(t, secretCert(t, ns, "root-edge-requestheader"), secretCert(t, ns, "root-requestheader-client-ca"), root, x509.ExtKeyUsageClientAuth)
	identity := secretCert(t, ns, "root-edge-kubeconfig")
	assert.Equal(t, "kcp-front-proxy", identity.Subject.CommonName)

	args := nonEmptyLines(kubectl(t, "get", "deployment", "edge-front-proxy", "-n", ns, "-o", `jsonpath={range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}`))
	for _, want := range []string{"--secure-port=6443", "--tls-cert-file=/etc/kcp-front-proxy/tls/tls.crt",
		"--root-kubeconfig=/etc/kcp-front-proxy/kubeconfig/kubeconfig", "--shards-kubeconfig=/etc/kcp-front-proxy/kubeconfig/kubeconfig",
		"--mapping-file=/etc/kcp-front-proxy/config/path-mapping.yaml", "--client-ca-file=/etc/kcp-front-proxy/client-ca/tls.crt",
		"--authentication-drop-groups=system:masters,system:kcp:logical-cluster-admin,system:kcp:initializer:*,system:kcp:terminator:*"} {
		assert.Contains(t, args, want)
	}
	assert.Equal(t, "/kcp-front-proxy", kubectl(t, "get", "deployment", "edge-front-proxy", "-n", ns, "-o", "jsonpath={.spec.template.spec.containers[0].command[0]}"))
	mapping := kubectl(t, "get", "configmap", "edge-config", "-n", ns, "-o", "jsonpath={.data.path-mapping\\.yaml}")
	assert.Contains(t, mapping, "path: /clusters/")
	assert.Contains(t, mapping, "backend: https://root-kcp."+ns+".svc.cluster.local:6443")
	assert.Equal(t, "443", kubectl(t, "get", "service", "edge-front-proxy", "-n", ns, "-o", "jsonpath={.spec.ports[0].port}"))

	kubectl(t, "delete", "frontproxy", "edge", "-n", ns, "--timeout=2m")
	for _, kind := range []string{"deployments", "services", "configmaps", "certificates", "secrets"} {
		out := kubectl(t, "get", kind, "-n", ns, "-l", "operator.kcp.io/frontproxy=edge", "-o", "name")
		assert.Empty(t, strings.TrimSpace(out), "%s of the front proxy left behind", kind)
	}
	assert.NotEmpty(t, kubectl(t, "get", "deployment", "root-kcp", "-n", ns, "-o", "name"), "the RootShard's objects stay")
}
