package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// editor binds user to kcp-setups-edit and kcp-setups-kubeconfig in ns, waits until the
// authorizer says so, and returns a kubectl that runs as that user and returns its stderr
// (with -v=6, the response status).
func editor(t *testing.T, ns, user string) func(args ...string) (string, error) {
	t.Helper()
	withSelfServiceRoles(t)
	kubectl(t, "create", "rolebinding", user+"-setups", "-n", ns, "--clusterrole=kcp-setups-edit", "--user="+user)
	kubectl(t, "create", "rolebinding", user+"-mint", "-n", ns, "--clusterrole=kcp-setups-kubeconfig", "--user="+user)
	kc, err := stack.UserKubeconfig(user)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		out, _, _ := stack.KubectlWith(t.Context(), kc, "auth", "can-i", "update", "rootshards.operator.kcp.io", "-n", ns)
		return strings.TrimSpace(out) == "yes"
	}, time.Minute, time.Second, "the bindings reach the authorizer")
	out, _, err := stack.KubectlWith(t.Context(), kc, "auth", "can-i", "create", "services", "-n", ns)
	require.Error(t, err)
	require.Equal(t, "no", strings.TrimSpace(out), "%s may not create Services herself", user)
	return func(args ...string) (string, error) {
		_, stderr, err := stack.KubectlWith(t.Context(), kc, append([]string{"-v=6", "-n", ns}, args...)...)
		return stderr, err
	}
}

// TestHeldValuesAreAskedAgain has the namespace's admin approve a RootShard whose Service
// carries an external-dns hostname, whose pods carry a label and mount a secrets-store CSI
// volume; eve, bound only to kcp-setups-edit, changes the value under each held key through
// kubectl: each is a 403 naming the field and the right, and nothing is stored. An edit of
// eve's that changes nothing held passes, and the admin passes each of her patches.
func TestHeldValuesAreAskedAgain(t *testing.T) {
	parallel(t, sharedRoles)
	ns := namespace(t, "held")
	as := editor(t, ns, "eve")
	givenRootShard(t, ns, withSpec(`  serviceTemplate:
    metadata:
      annotations: {external-dns.alpha.kubernetes.io/hostname: kcp.team-a.example.com}
  deploymentTemplate:
    spec:
      template:
        metadata:
          labels: {app: kcp-team-a}
  extraVolumes:
  - name: vault
    csi:
      driver: secrets-store.csi.k8s.io
      readOnly: true
      volumeAttributes: {secretProviderClass: team-a}
`), until())
	get := func(path string) string {
		return kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", "jsonpath={"+path+"}")
	}
	hostname := `.spec.serviceTemplate.metadata.annotations.external-dns\.alpha\.kubernetes\.io/hostname`
	label := ".spec.deploymentTemplate.spec.template.metadata.labels.app"
	vault := ".spec.extraVolumes"
	stored := map[string]string{hostname: get(hostname), label: get(label), vault: get(vault)}
	require.Equal(t, "kcp.team-a.example.com", stored[hostname])
	require.Equal(t, "kcp-team-a", stored[label])
	require.Contains(t, stored[vault], `"secretProviderClass":"team-a"`)

	tests := []struct {
		name, patch, says string
	}{
		{
			name:  "her hostname on the admin's external-dns annotation",
			patch: `{"spec":{"serviceTemplate":{"metadata":{"annotations":{"external-dns.alpha.kubernetes.io/hostname":"login.bank.example.com"}}}}}`,
			says: `user "eve" may not set spec.serviceTemplate.metadata to external-dns.alpha.kubernetes.io/hostname without create on services in namespace "` +
				ns + `"`,
		},
		{
			name:  "the admin's pod label with another team's value",
			patch: `{"spec":{"deploymentTemplate":{"spec":{"template":{"metadata":{"labels":{"app":"payments"}}}}}}}`,
			says:  `spec.deploymentTemplate.spec.template.metadata.labels to app without create on deployments.apps in namespace "` + ns + `"`,
		},
		{
			name: "the admin's CSI volume reading another vault",
			patch: `{"spec":{"extraVolumes":[{"name":"vault","csi":{"driver":"secrets-store.csi.k8s.io","readOnly":true,` +
				`"volumeAttributes":{"secretProviderClass":"payments"}}}]}}`,
			says: `spec.extraVolumes[0].csi to CSI driver secrets-store.csi.k8s.io without create on pods in namespace "` + ns + `"`,
		},
		{
			name: "a further CSI volume of the admin's driver",
			patch: `{"spec":{"extraVolumes":[{"name":"vault","csi":{"driver":"secrets-store.csi.k8s.io","readOnly":true,` +
				`"volumeAttributes":{"secretProviderClass":"team-a"}}},{"name":"vault2","csi":{"driver":"secrets-store.csi.k8s.io",` +
				`"readOnly":true,"volumeAttributes":{"secretProviderClass":"payments"}}}]}}`,
			says: `spec.extraVolumes[1].csi to CSI driver secrets-store.csi.k8s.io without create on pods`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stderr, err := as("patch", "rootshard", "root", "--type=merge", "-p", tc.patch)
			require.Error(t, err, "refused")
			assert.Contains(t, stderr, "403 Forbidden")
			assert.Contains(t, stderr, tc.says)
			for path, want := range stored {
				assert.Equal(t, want, get(path), "nothing was stored at %s", path)
			}
			// The namespace's admin holds every right: the same patch passes.
			out, err := stack.Kubectl(t.Context(), "patch", "rootshard", "root", "-n", ns, "--type=merge", "--dry-run=server", "-p", tc.patch)
			assert.NoError(t, err, "%s", out)
		})
	}

	// An edit that changes nothing held asks nothing: eve keeps the admin's approval.
	stderr, err := as("patch", "rootshard", "root", "--type=merge", "-p", `{"spec":{"logging":{"level":4}}}`)
	require.NoError(t, err, stderr)
	assert.Contains(t, stderr, "200 OK")

	// The admin changes the hostname for real, and it is stored.
	kubectl(t, "patch", "rootshard", "root", "-n", ns, "--type=merge", "-p", tests[0].patch)
	assert.Equal(t, "login.bank.example.com", get(hostname))
}
