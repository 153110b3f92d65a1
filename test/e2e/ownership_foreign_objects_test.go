package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

// foreignObjects are another user's ConfigMap, Secret and Service, made with the names a
// FrontProxy app, a RootShard web and a CacheServer alpha derive (app-config, the serving
// certificate's web-server, alpha-cache-server).
const foreignObjects = `apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  settings.yaml: "team b's data"
---
apiVersion: v1
kind: Secret
metadata:
  name: web-server
stringData:
  password: "team b's password"
---
apiVersion: v1
kind: Service
metadata:
  name: alpha-cache-server
spec:
  selector: {app: team-b}
  ports: [{port: 8080}]
`

// setupsWithTakenNames are a RootShard root with a FrontProxy app of it, a RootShard web and
// a CacheServer alpha: each but root derives a name foreignObjects took.
var setupsWithTakenNames = framework.RootShardManifest("root", "kcp.example.com", 6443) + "---\n" +
	framework.RootShardManifest("web", "web.example.com", 6443) + `---
apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata:
  name: app
spec:
  rootShard: {ref: {name: root}}
  external: {hostname: app.example.com, port: 443}
---
apiVersion: operator.kcp.io/v1alpha1
kind: CacheServer
metadata:
  name: alpha
`

// TestNeverTakesOver: the server never writes, adopts or deletes an object it did not
// create. Another user's ConfigMap, Secret and Service with the names three setups derive
// stay as they were, to the resourceVersion, while the setups exist (which say
// Synced=False, NameConflict, naming the object) and after they are deleted; setups made
// again reach Running once the foreign objects are gone.
func TestNeverTakesOver(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "takeover")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, foreignObjects))
	foreign := []string{"configmap/app-config", "secret/web-server", "service/alpha-cache-server"}
	state := func() map[string]string {
		out := map[string]string{}
		for _, o := range foreign {
			out[o] = kubectl(t, "get", o, "-n", ns, "-o", "jsonpath={.metadata.resourceVersion} {.metadata.labels} {.data} {.spec.selector} {.spec.ports}")
		}
		return out
	}
	before := state()

	setups := writeManifest(t, setupsWithTakenNames)
	kubectl(t, "apply", "-n", ns, "-f", setups)
	conflicts := map[string]string{
		"frontproxy/app":    "ConfigMap " + ns + "/app-config exists and was not created for this object (not by kcp-setups)",
		"rootshard/web":     "Secret " + ns + "/web-server exists and was not created for this object (not by kcp-setups)",
		"cacheserver/alpha": "Service " + ns + "/alpha-cache-server exists and was not created for this object (not by kcp-setups)",
	}
	for o, says := range conflicts {
		waitForReason(t, ns, o, "Synced", "False", "NameConflict")
		assert.Contains(t, conditionMessage(t, stack, ns, o, "Synced"), says)
		assert.NotEqual(t, "Running", kubectl(t, "get", o, "-n", ns, "-o", "jsonpath={.status.phase}"), o)
	}
	// The Events reach kube-apiserver through the recorder's queue and the host client's rate
	// limit, after the conditions: on a loaded machine that takes longer than the conditions.
	assert.Eventually(t, func() bool {
		out, _ := stack.Kubectl(t.Context(), "get", "events", "-n", ns, "--field-selector", "reason=NameConflict,type=Warning", "-o", "name")
		return len(nonEmptyLines(out)) >= len(conflicts)
	}, 2*time.Minute, 2*time.Second, "a Warning Event says so for each")
	waitFor(t, ns, "rootshard/root", "Available")
	assert.Equal(t, before, state(), "the foreign objects were not written")

	kubectl(t, "delete", "-n", ns, "-f", setups, "--wait")
	require.Eventually(t, func() bool {
		out, _ := stack.Kubectl(t.Context(), "get", "rootshards,frontproxies,cacheservers", "-n", ns, "-o", "name")
		return strings.TrimSpace(out) == ""
	}, 2*time.Minute, time.Second, "the setups are gone")
	assert.Equal(t, before, state(), "deleting the setups deleted nothing of another's")

	// Made again, they wait; once the foreign objects are gone, they run.
	kubectl(t, "apply", "-n", ns, "-f", setups)
	waitForReason(t, ns, "rootshard/web", "Synced", "False", "NameConflict")
	assert.Equal(t, before, state())
	kubectl(t, "delete", "-n", ns, "configmap/app-config", "secret/web-server", "service/alpha-cache-server")
	for o := range conflicts {
		waitForReason(t, ns, o, "Synced", "True", "Reconciled")
		waitFor(t, ns, o, "Available")
		assert.Equal(t, "Running", kubectl(t, "get", o, "-n", ns, "-o", "jsonpath={.status.phase}"), o)
	}
}
