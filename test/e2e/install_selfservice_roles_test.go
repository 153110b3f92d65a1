package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

// TestSelfServiceRoles grants the built-in view and edit roles in one namespace and checks,
// with kubectl --as, who may list, create and mint where.
func TestSelfServiceRoles(t *testing.T) {
	parallel(t, sharedRoles)
	withSelfServiceRoles(t)
	a, b := namespace(t, "team-a-self"), namespace(t, "team-b-self")
	kubectl(t, "create", "rolebinding", "viewer", "-n", a, "--clusterrole=view", "--user=vera")
	kubectl(t, "create", "rolebinding", "editor", "-n", a, "--clusterrole=edit", "--user=eddie")

	as := func(user string, args ...string) (string, error) {
		return stack.Kubectl(t.Context(), append([]string{"--as=" + user}, args...)...)
	}
	mint := func(user, ns string) (string, error) {
		return as(user, "create", "--raw", "/apis/operator.kcp.io/v1alpha1/namespaces/"+ns+"/rootshards/root/kubeconfig", "-f", writeManifest(t, `{"spec":{}}`))
	}
	// The aggregation controller fills the built-in roles in shortly.
	require.Eventually(t, func() bool {
		_, err := as("eddie", "apply", "-n", a, "-f", writeManifest(t, framework.RootShardManifest("root", "kcp.example.com", 6443)))
		return err == nil
	}, time.Minute, time.Second, "an editor creates setups in its namespace")
	waitFor(t, a, "rootshard/root", "CertificatesReady")
	require.Eventually(t, func() bool {
		out, err := mint("eddie", a)
		return err == nil && strings.Contains(out, `"kubeconfig"`)
	}, time.Minute, time.Second, "an editor mints in its namespace")

	out, err := as("vera", "get", "rootshards", "-n", a)
	require.NoError(t, err, "a viewer lists: %s", out)
	assert.Contains(t, out, "root")
	out, err = mint("vera", a)
	require.Error(t, err)
	assert.Contains(t, out, `cannot create resource "rootshards/kubeconfig"`, "but does not mint")

	givenRootShard(t, b, until())
	for _, user := range []string{"vera", "eddie", "nobody"} {
		for _, ns := range []string{a, b} {
			if ns == a && user != "nobody" {
				continue
			}
			out, err := as(user, "get", "rootshards", "-n", ns)
			require.Error(t, err, "%s lists in %s", user, ns)
			assert.Contains(t, out, "forbidden")
			out, err = mint(user, ns)
			require.Error(t, err, "%s mints in %s", user, ns)
			assert.Contains(t, out, "forbidden")
		}
	}
	_, err = as("eddie", "apply", "-n", b, "-f", writeManifest(t, framework.RootShardManifest("mine", "kcp.example.com", 6443)))
	assert.Error(t, err, "an editor of one namespace creates nothing in another")
}
