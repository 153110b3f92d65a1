package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompatAcceptedAsKcpOperator applies what kcp-operator accepts and this server once
// refused: FrontProxy externalHostname host:port, etcd endpoints without a scheme and a
// prefix without a leading slash, cache.embedded.enabled together with cache.ref, and
// certificateTemplates keys that name no certificate (virtual-workspaces among them). Each
// comes back as a kubectl warning that says what it means here, and the setup reaches Running
// meaning what it means in kcp-operator. A refusal that stays says what to write instead.
func TestCompatAcceptedAsKcpOperator(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "compat-lenient")
	out, err := stack.Kubectl(t.Context(), "apply", "--validate=strict", "-n", ns, "-f", compatDir+"/accepted-as-kcp-operator.yaml")
	require.NoError(t, err, "what kcp-operator accepts applies:\n%s", out)
	for _, warning := range []string{
		`Warning: spec.certificateTemplates[serving] has no effect: "serving" names no certificate here and is ignored, as kcp-operator ignores it`,
		`Warning: spec.etcd.endpoints[0]: "etcd.kcp.svc.cluster.local:2379" has no scheme: kcp's etcd client dials it with TLS exactly when spec.etcd.tlsConfig is set; write "http://etcd.kcp.svc.cluster.local:2379"`,
		`Warning: spec.etcd.prefix: "lenient" does not start with '/': kcp stores its keys under "/lenient" all the same; write "/lenient"`,
		`Warning: spec.cache.embedded.enabled: true is ignored: the root shard uses the CacheServer of spec.cache and no embedded cache`,
		`Warning: spec.certificateTemplates[virtual-workspaces] has no effect: "virtual-workspaces" templates kcp-operator's <name>-virtual-workspaces certificate`,
		`Warning: spec.certificateTemplates[sever] has no effect: "sever" names no certificate here`,
		`Warning: spec.etcd.endpoints[0]: "10.0.0.10:2379" has no scheme: kcp's etcd client dials it with TLS exactly when spec.etcd.tlsConfig is set; write "https://10.0.0.10:2379"`,
		`Warning: spec.etcd.prefix: "lenient-1" does not start with '/'`,
		`Warning: spec.externalHostname is deprecated: use spec.external.hostname: legacy.lenient.example.com and spec.external.port: 8443, which it is read as, as in kcp-operator`,
	} {
		assert.Contains(t, out, warning, "kubectl shows the server's warning")
	}

	for _, o := range []string{"cacheserver/lenient-cache", "rootshard/lenient", "shard/lenient-1", "frontproxy/lenient-edge"} {
		kubectl(t, "wait", "-n", ns, "--for=jsonpath={.status.phase}=Running", o, "--timeout=3m")
	}
	get := func(object, path string) string { return kubectl(t, "get", object, "-n", ns, "-o", "jsonpath="+path) }
	args := func(deployment string) []string {
		return nonEmptyLines(get("deployment/"+deployment, `{range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}`))
	}
	root := args("lenient-kcp")
	assert.Contains(t, root, "--etcd-servers=etcd.kcp.svc.cluster.local:2379", "passed to kcp as written, as kcp-operator does")
	assert.Contains(t, root, "--etcd-prefix=lenient")
	assert.Contains(t, root, "--cache-kubeconfig=/etc/cache-server/kubeconfig/kubeconfig", "cache.ref wins over embedded.enabled")
	shard := args("lenient-1-shard-kcp")
	assert.Contains(t, shard, "--etcd-servers=10.0.0.10:2379")
	assert.Contains(t, shard, "--etcd-certfile=/etc/etcd/tls/tls.crt")
	assert.Equal(t, "8443", get("service/lenient-edge-front-proxy", "{.spec.ports[0].port}"), "the port of externalHostname")
	dns := get("certificate/lenient-lenient-edge-server", "{.spec.dnsNames}")
	assert.Contains(t, dns, `"legacy.lenient.example.com"`)
	assert.NotContains(t, dns, "8443")
	assert.Contains(t, kubectl(t, "get", "frontproxy", "lenient-edge", "-n", ns), "legacy.lenient.example.com ", "the Hostname column")
	missing, _ := stack.Kubectl(t.Context(), "get", "certificate", "lenient-virtual-workspaces", "-n", ns)
	assert.Contains(t, missing, "NotFound", "the virtual-workspaces template templates nothing here")
	assert.NotContains(t, get("certificate/lenient-cache-ca", "{.metadata.labels}"), "typo", "an unknown key templates nothing")

	// A refusal that stays says what to write instead.
	kc := writeManifest(t, `apiVersion: operator.kcp.io/v1alpha1
kind: Kubeconfig
metadata:
  name: lenient-admin
spec:
  target: {rootShardRef: {name: lenient}}
  username: admin
  validity: 24h
  secretRef: {name: lenient-admin-kubeconfig}
  certificateTemplate:
    spec:
      subject:
        organizations: [system:masters]
`)
	out, err = stack.Kubectl(t.Context(), "apply", "--validate=strict", "-n", ns, "-f", kc)
	require.Error(t, err)
	assert.Contains(t, out, "spec.certificateTemplate.spec.subject.organizations: Forbidden: the groups of a Kubeconfig are spec.groups, "+
		"which the identity rules check: write spec.groups: [system:masters] instead")
}
