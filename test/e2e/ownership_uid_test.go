package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheOwnersUIDMarksItsObjects: what the server writes for a setup carries the setup's
// UID, down to the Secret cert-manager issues for it; a leftover of a deleted setup of the
// same name (the same labels, another UID) is neither taken over nor deleted.
func TestTheOwnersUIDMarksItsObjects(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "owneruid")
	givenRootShard(t, ns, until())
	givenFrontProxy(t, ns, named("app"))
	uid := kubectl(t, "get", "frontproxy/app", "-n", ns, "-o", "jsonpath={.metadata.uid}")
	require.NotEmpty(t, uid)
	mark := "jsonpath={.metadata.labels.operator\\.kcp\\.io/owner-uid}"
	for _, o := range []string{"configmap/app-config", "deployment/app-front-proxy", "service/app-front-proxy",
		"certificate/root-app-server", "secret/root-app-server", "secret/root-app-dynamic-kubeconfig"} {
		assert.Equal(t, uid, kubectl(t, "get", o, "-n", ns, "-o", mark), o)
	}

	// A leftover of a FrontProxy edge deleted earlier: our labels, another UID.
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: edge-config
  labels:
    app.kubernetes.io/managed-by: kcp-setups
    operator.kcp.io/frontproxy: edge
    operator.kcp.io/owner-uid: 00000000-0000-0000-0000-000000000000
data:
  mapping.yaml: "the old one"
`))
	leftover := func() string {
		return kubectl(t, "get", "configmap/edge-config", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion} {.data}")
	}
	before := leftover()
	edge := writeManifest(t, `apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata:
  name: edge
spec:
  rootShard: {ref: {name: root}}
  external: {hostname: edge.example.com, port: 443}
`)
	kubectl(t, "apply", "-n", ns, "-f", edge)
	waitForReason(t, ns, "frontproxy/edge", "Synced", "False", "NameConflict")
	assert.Contains(t, conditionMessage(t, stack, ns, "frontproxy/edge", "Synced"),
		"ConfigMap "+ns+"/edge-config exists and was not created for this object (by kcp-setups for UID 00000000-0000-0000-0000-000000000000, frontproxy edge)")
	kubectl(t, "delete", "-n", ns, "-f", edge, "--wait")
	assert.Equal(t, before, leftover(), "the leftover was neither written nor deleted")
}
