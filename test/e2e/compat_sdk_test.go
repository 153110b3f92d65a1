package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompatSDKShapes applies every kind as kcp-operator's Go SDK (its
// sdk/apis/operator/v1alpha1 at v0.9) serializes it, with the zero-valued structs it sends
// for fields its user left unset ("cache": {}, "certificates": {}, "external": {"port": 0},
// "issuerRef": null, path mappings' empty files), with kubectl's strict field validation;
// each reaches Running, and means there what it means in kcp-operator. It also checks
// kcp-operator's labels on the workloads and its RootShard condition.
func TestCompatSDKShapes(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "compat-sdk")
	out, err := stack.Kubectl(t.Context(), "apply", "--validate=strict", "-n", ns, "-f", compatDir+"/sdk/")
	require.NoError(t, err, "kcp-operator's Go SDK's objects apply:\n%s", out)
	assert.NotContains(t, out, "Warning:", "nothing the SDK sends is deprecated")

	for _, o := range []string{"cacheserver/sdk-cache", "rootshard/sdk", "shard/sdk-1", "frontproxy/sdk-edge", "virtualworkspace/sdk-vw"} {
		kubectl(t, "wait", "-n", ns, "--for=jsonpath={.status.phase}=Running", o, "--timeout=3m")
	}
	kubectl(t, "wait", "-n", ns, "--for=jsonpath={.status.phase}=Ready", "kubeconfig/sdk-admin", "--timeout=3m")
	get := func(object, path string) string { return kubectl(t, "get", object, "-n", ns, "-o", "jsonpath="+path) }
	args := func(deployment string) []string {
		return nonEmptyLines(get("deployment/"+deployment, `{range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}`))
	}

	// "certificates": {} is stored as unset: the namespace bootstrap issues the root CAs.
	assert.Empty(t, get("rootshard/sdk", "{.spec.certificates}"))
	assert.Empty(t, get("cacheserver/sdk-cache", "{.spec.certificates}"))
	assert.Equal(t, "kcp-pki-ca", get("certificate/sdk-ca", "{.spec.issuerRef.name}"))
	assert.Equal(t, "kcp-pki-ca", get("certificate/sdk-cache-ca", "{.spec.issuerRef.name}"))
	// "cache": {} is the embedded cache, and the Shard's is its RootShard's.
	assert.Empty(t, withPrefix(args("sdk-kcp"), "--cache-kubeconfig"), "the root shard runs its embedded cache")
	assert.Contains(t, args("sdk-1-shard-kcp"), "--cache-kubeconfig=/etc/kcp/client-kubeconfig/kubeconfig", "the shard uses the root shard's")
	// "port": 0 is the default port; "issuerRef": null is the generated issuer.
	assert.Equal(t, "6443", get("rootshard/sdk", "{.spec.external.port}"))
	assert.Contains(t, args("sdk-kcp"), "--shard-external-url=https://sdk.example.com:6443")
	assert.Equal(t, "sdk-server-ca", get("certificate/sdk-server", "{.spec.issuerRef.name}"))
	assert.Contains(t, get("certificate/sdk-server", "{.spec.dnsNames}"), "sdk.shard.example.com")
	assert.Equal(t, "sdk", get("certificate/sdk-1-client", "{.metadata.labels.team}"))
	// A FrontProxy's "external": {"hostname": "", "port": 0} is the RootShard's address.
	assert.Equal(t, "6443", get("service/sdk-edge-front-proxy", "{.spec.ports[0].port}"))
	assert.Contains(t, get("configmap/sdk-edge-config", "{.data.path-mapping\\.yaml}"), "/services/sdk/")
	assert.Contains(t, kubectl(t, "get", "virtualworkspace", "sdk-vw", "-n", ns), "https://vw.sdk.example.com:6443", "the URL column")

	t.Run("kcp-operator's labels", func(t *testing.T) {
		for component, want := range map[string]string{
			"rootshard":         "deployment.apps/sdk-kcp service/sdk-kcp",
			"shard":             "deployment.apps/sdk-1-shard-kcp service/sdk-1-shard-kcp",
			"front-proxy":       "deployment.apps/sdk-edge-front-proxy service/sdk-edge-front-proxy",
			"cache-server":      "deployment.apps/sdk-cache-cache-server service/sdk-cache-cache-server",
			"virtual-workspace": "deployment.apps/sdk-vw-virtual-workspace service/sdk-vw-virtual-workspace",
		} {
			got := kubectl(t, "get", "deployments,services", "-n", ns, "-o", "name",
				"-l", "app.kubernetes.io/name=kcp,app.kubernetes.io/component="+component+",app.kubernetes.io/managed-by=kcp-setups")
			assert.ElementsMatch(t, strings.Fields(want), strings.Fields(got), "kcp-operator's component %s", component)
		}
		pods := kubectl(t, "get", "pods", "-n", ns, "-o", "name", "-l", "app.kubernetes.io/name=kcp,app.kubernetes.io/instance=sdk,app.kubernetes.io/managed-by=kcp-setups")
		assert.NotEmpty(t, strings.TrimSpace(pods), "the root shard's pods carry app.kubernetes.io/name: kcp")
		assert.Equal(t, "sdk", get("deployment/sdk-kcp", "{.spec.template.metadata.labels.team}"), "the template's labels stay")
		assert.Equal(t, `{"app.kubernetes.io/component":"kcp","app.kubernetes.io/instance":"sdk","operator.kcp.io/rootshard":"sdk"}`,
			get("deployment/sdk-kcp", "{.spec.selector.matchLabels}"), "the selector is the one it always was")
	})

	t.Run("kcp-operator's RootShard condition", func(t *testing.T) {
		kubectl(t, "wait", "-n", ns, "--for=condition=RootShard", "shard/sdk-1", "frontproxy/sdk-edge", "--timeout=1m")
		assert.Equal(t, "Valid", get("shard/sdk-1", `{.status.conditions[?(@.type=="RootShard")].reason}`))
		assert.Equal(t, "Valid", get("frontproxy/sdk-edge", `{.status.conditions[?(@.type=="RootShard")].reason}`))
	})
}

// TestCompatAcceptedAsKcpOperator applies what kcp-operator accepts and this server once
// refused: FrontProxy externalHostname host:port, etcd endpoints without a scheme and a
// prefix without a leading slash, cache.embedded.enabled together with cache.ref, and
// certificateTemplates keys that name no certificate (virtual-workspaces among them). Each
// comes back as a kubectl warning that says what it means here, and the setup reaches Running
// meaning what it means in kcp-operator. A refusal that stays says what to write instead.
func TestCompatAcceptedAsKcpOperator(t *testing.T) {
	t.Parallel()
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
