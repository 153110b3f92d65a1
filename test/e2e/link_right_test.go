package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// linkManifest is the Link name of RootShard root with identity, as a user writes it.
func linkManifest(name, identity string) string {
	return `apiVersion: operator.kcp.io/v1alpha1
kind: Link
metadata:
  name: ` + name + `
spec:
  rootShardRef: {name: root}
  identity: ` + identity + `
  consumers: [Shard, Kubeconfig]
`
}

// TestLinkNeedsTheLinkRight plays decision 2 of issue 40 through kubectl and real RBAC: lena
// edits the setups of her namespace (kcp-setups-edit), which lets her neither create a Link
// (RBAC refuses the resource) nor, once a Role lets her create Links, declare one (the server
// asks the authorizer for link on the RootShard and refuses with a 403 that names it); bound
// to kcp-setups-link she declares it, and what is wrong in a Link is a 422 naming the field.
func TestLinkNeedsTheLinkRight(t *testing.T) {
	parallel(t, sharedRoles)
	withSelfServiceRoles(t)
	ns := namespace(t, "link-right")
	kubectl(t, "create", "rolebinding", "setups", "-n", ns, "--clusterrole=kcp-setups-edit", "--user=lena")
	lena, err := stack.UserKubeconfig("lena")
	require.NoError(t, err)
	canI := func(verb, what string) string {
		out, _, _ := stack.KubectlWith(t.Context(), lena, "auth", "can-i", verb, what, "-n", ns)
		return strings.TrimSpace(out)
	}
	create := func(manifest string) (string, error) {
		_, stderr, err := stack.KubectlWith(t.Context(), lena, "create", "-v=6", "-n", ns, "-f", writeManifest(t, manifest))
		return stderr, err
	}
	require.Eventually(t, func() bool { return canI("create", "rootshards.operator.kcp.io") == "yes" },
		time.Minute, time.Second, "the binding reaches the authorizer")
	assert.Equal(t, "no", canI("link", "rootshards.operator.kcp.io/root"), "kcp-setups-edit grants no link")

	stderr, err := create(linkManifest("eu-1", "eu-1.links.example.com"))
	require.Error(t, err, "an editor creates no Link")
	assert.Contains(t, stderr, "403 Forbidden")
	assert.Contains(t, stderr, `cannot create resource "links"`)

	// Allowed to create Links but not to link: the server's own check refuses.
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: links-only
rules:
- apiGroups: [operator.kcp.io]
  resources: [links]
  verbs: [get, list, create, update]
`))
	kubectl(t, "create", "rolebinding", "links-only", "-n", ns, "--role=links-only", "--user=lena")
	require.Eventually(t, func() bool { return canI("create", "links.operator.kcp.io") == "yes" }, time.Minute, time.Second)
	stderr, err = create(linkManifest("eu-1", "eu-1.links.example.com"))
	require.Error(t, err, "creating Links is not linking")
	assert.Contains(t, stderr, "403 Forbidden")
	assert.Contains(t, stderr, `user "lena" may not set spec.rootShardRef to RootShard/root without link on rootshards.operator.kcp.io "root" in namespace "`+ns+`"`)
	_, err = stack.Kubectl(t.Context(), "get", "link", "eu-1", "-n", ns)
	assert.Error(t, err, "nothing is stored")

	kubectl(t, "create", "rolebinding", "link", "-n", ns, "--clusterrole=kcp-setups-link", "--user=lena")
	require.Eventually(t, func() bool { return canI("link", "rootshards.operator.kcp.io/root") == "yes" }, time.Minute, time.Second)
	// The server's authorizer keeps a denial for a few seconds (its cache of
	// SubjectAccessReviews): the grant reaches it then.
	if !assert.Eventually(t, func() bool {
		stderr, err = create(linkManifest("eu-1", "eu-1.links.example.com"))
		return err == nil
	}, time.Minute, 2*time.Second) {
		t.Fatalf("kcp-setups-link links, yet: %s", stderr)
	}
	out, _, err := stack.KubectlWith(t.Context(), lena, "get", "links", "-n", ns)
	require.NoError(t, err)
	assert.Regexp(t, `^NAME\s+ROOTSHARD\s+IDENTITY\s+CONSUMERS\s+READY\s+AGE\neu-1\s+root\s+eu-1\.links\.example\.com\s+Shard,Kubeconfig\s+(Unknown|False|True)\s`, out)

	// What is wrong is a 422 that names the field, for her as for anyone.
	for _, tc := range []struct {
		manifest string
		says     []string
	}{
		{linkManifest("eu-2", "EU-2.links.example.com"), []string{`spec.identity: Invalid value: "EU-2.links.example.com"`}},
		{strings.Replace(linkManifest("eu-2", "eu-2.links.example.com"), "[Shard, Kubeconfig]", "[Shard, RootShard]", 1),
			[]string{`spec.consumers[1]: Unsupported value: "RootShard"`}},
		{linkManifest("eu-1b", "eu-1.links.example.com"),
			[]string{`spec.identity: Invalid value: "eu-1.links.example.com": is the identity of Link/eu-1 of RootShard "root"`}},
	} {
		stderr, err := create(tc.manifest)
		require.Error(t, err)
		assert.Contains(t, stderr, "422 Unprocessable Entity")
		for _, s := range tc.says {
			assert.Contains(t, stderr, s)
		}
	}
	_, stderr, err = stack.KubectlWith(t.Context(), lena, "apply", "--server-side", "--force-conflicts", "-n", ns, "-f",
		writeManifest(t, strings.Replace(linkManifest("eu-1", "eu-9.links.example.com"), "rootShardRef: {name: root}", "rootShardRef: {name: other}", 1)))
	require.Error(t, err, "a Link's RootShard and identity are immutable")
	assert.Contains(t, stderr, `spec.identity: Invalid value: "eu-9.links.example.com": field is immutable`)
	assert.Contains(t, stderr, `spec.rootShardRef: Invalid value: "other": field is immutable`)
}
