package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// stuckFrontProxy is a FrontProxy of the RootShard root whose pods no node can take.
func stuckFrontProxy(name string) string {
	return `apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata:
  name: ` + name + `
spec:
  rootShard: {ref: {name: root}}
  external: {hostname: ` + name + `.example.com, port: 443}
  deploymentTemplate:
    spec:
      template:
        spec:
          nodeSelector: {example.com/nowhere: "true"}
`
}

// rotationMessage is the message of the RootShard's CARotation condition.
func rotationMessage(t *testing.T, ns string) string {
	out, _ := stack.Kubectl(t.Context(), "get", "rootshard", "root", "-n", ns, "-o",
		`jsonpath={.status.conditions[?(@.type=="CARotation")].message}`)
	return out
}

// TestARotationNamesWhatItWaitsFor: eve, an editor of the namespace, creates a FrontProxy
// whose pods cannot be scheduled; it holds the admin's rotation of the client CA in
// Preparing, and the condition CARotation names it. A FrontProxy eve creates after Start
// holds nothing and is not named. Eve may not exclude hers; the admin excludes it, and the
// rotation reaches Prepared, then Completed.
func TestARotationNamesWhatItWaitsFor(t *testing.T) {
	parallel(t, sharedRoles)
	withSelfServiceRoles(t)
	ns := namespace(t, "rotwait")
	kubectl(t, "create", "rolebinding", "setups", "-n", ns, "--clusterrole=kcp-setups-edit", "--user=eve")
	givenRootShard(t, ns)

	eve, err := stack.UserKubeconfig("eve")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		out, _, _ := stack.KubectlWith(t.Context(), eve, "auth", "can-i", "create", "frontproxies.operator.kcp.io", "-n", ns)
		return strings.TrimSpace(out) == "yes"
	}, time.Minute, time.Second, "the binding reaches the authorizer")
	_, stderr, err := stack.KubectlWith(t.Context(), eve, "apply", "-n", ns, "-f", writeManifest(t, stuckFrontProxy("stuck")))
	require.NoError(t, err, stderr)
	kubectl(t, "wait", "-n", ns, "frontproxy/stuck", "--for=condition=Available=False", "--timeout=3m")

	_, stderr, err = rotate(t, ns, "rootshards", "root", "Start", "client")
	require.NoError(t, err, stderr)
	started := rotations(t, ns, "root")["client"].LastInitiationTime
	require.NotNil(t, started)

	// Created after Start: a second later than its time, to the second.
	time.Sleep(time.Until(started.Add(1100 * time.Millisecond)))
	_, stderr, err = stack.KubectlWith(t.Context(), eve, "apply", "-n", ns, "-f", writeManifest(t, stuckFrontProxy("late")))
	require.NoError(t, err, stderr)
	kubectl(t, "wait", "-n", ns, "frontproxy/late", "--for=condition=Available=False", "--timeout=3m")

	var msg string
	if !assert.Eventually(t, func() bool {
		msg = rotationMessage(t, ns)
		return strings.Contains(msg, "client (Preparing, waiting for ") && strings.Contains(msg, "FrontProxy "+ns+"/stuck (Available=False")
	}, 3*time.Minute, 2*time.Second) {
		t.Fatalf("the condition does not name the FrontProxy: %q", msg)
	}
	t.Logf("CARotation: %s", msg)
	assert.NotContains(t, msg, ns+"/late", "a member created after Start is not waited for")
	// It holds: the rotation stays Preparing while the FrontProxy exists.
	time.Sleep(20 * time.Second)
	assert.Equal(t, operatorv1alpha1.CARotationPreparing, rotations(t, ns, "root")["client"].Phase)
	msg = rotationMessage(t, ns)
	assert.Contains(t, msg, "FrontProxy "+ns+"/stuck")
	assert.NotContains(t, msg, ns+"/late")

	// Eve may not exclude her FrontProxy: that is the rotation right, which edit lacks.
	body := `{"apiVersion":"operator.kcp.io/v1alpha1","kind":"CARotation","spec":{"phase":"Start","authorities":["client"],` +
		`"excludeMembers":[{"kind":"FrontProxy","name":"stuck"}]}}`
	path := "/apis/operator.kcp.io/v1alpha1/namespaces/" + ns + "/rootshards/root/rotation"
	_, stderr, err = stack.KubectlWith(t.Context(), eve, "create", "--raw", path, "-f", writeManifest(t, body))
	require.Error(t, err)
	assert.Contains(t, stderr, "Forbidden")
	assert.Empty(t, rotations(t, ns, "root")["client"].ExcludedMembers, "nothing stored for eve")
	// A kind that is no member is a 422 with its field path.
	bad := strings.Replace(body, `"kind":"FrontProxy"`, `"kind":"Deployment"`, 1)
	_, stderr, err = stack.KubectlWith(t.Context(), stack.AdminKubeconfig, "create", "--raw", path, "-f", writeManifest(t, bad))
	require.Error(t, err)
	assert.Contains(t, stderr, "spec.excludeMembers[0].kind: Unsupported value")
	assert.Contains(t, stderr, "Deployment")

	// The admin excludes it: the rotation stops waiting for it.
	_, stderr, err = stack.KubectlWith(t.Context(), stack.AdminKubeconfig, "create", "--raw", path, "-f", writeManifest(t, body))
	require.NoError(t, err, stderr)
	assert.Equal(t, []operatorv1alpha1.CARotationMember{{Kind: "FrontProxy", Name: "stuck"}}, rotations(t, ns, "root")["client"].ExcludedMembers)
	assert.True(t, rotations(t, ns, "root")["client"].LastInitiationTime.Equal(started), "Start again keeps the rotation's start")
	waitForRotation(t, ns, "root", operatorv1alpha1.CARotationPrepared, "client")
	for _, fp := range []string{"stuck", "late"} {
		var obj operatorv1alpha1.FrontProxy
		require.NoError(t, json.Unmarshal([]byte(kubectl(t, "get", "frontproxy", fp, "-n", ns, "-o", "json")), &obj))
		for _, c := range obj.Status.Conditions {
			if c.Type == operatorv1alpha1.ConditionAvailable {
				assert.NotEqual(t, "True", string(c.Status), "%s is still not Available: Prepared did not wait for it", fp)
			}
		}
	}

	_, stderr, err = rotate(t, ns, "rootshards", "root", "Complete", "client")
	require.NoError(t, err, stderr)
	waitForRotation(t, ns, "root", operatorv1alpha1.CARotationCompleted, "client")
	assert.Empty(t, rotationMessage(t, ns), "no rotation runs")
}
