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
	parallel(t, alone)
	ns := namespace(t, "compat-sdk")
	out, err := stack.Kubectl(t.Context(), "apply", "--validate=strict", "-n", ns, "-f", compatDir+"/sdk/")
	require.NoError(t, err, "kcp-operator's Go SDK's objects apply:\n%s", out)
	assert.NotContains(t, withoutPreview(out), "Warning:", "nothing the SDK sends is deprecated")

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
