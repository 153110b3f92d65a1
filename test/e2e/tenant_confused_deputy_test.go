package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

// TestTheServerIsNoConfusedDeputy has a user who may only manage setups in one namespace (the
// kcp-setups-edit role, without edit: no Deployments, no Certificates) try to get, through
// the server's rights, what they may not have: a pod on the node's filesystem, on every node,
// with a weaker security profile, running their image or their command, reachable on every
// node, signed by an issuer they may not use.
// Each is refused with the status it gets, and the issuer is accepted once RBAC allows it.
func TestTheServerIsNoConfusedDeputy(t *testing.T) {
	parallel(t, sharedRoles)
	withSelfServiceRoles(t)
	ns := namespace(t, "deputy")
	kubectl(t, "create", "rolebinding", "setups-only", "-n", ns, "--clusterrole=kcp-setups-edit", "--user=mallory")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, `apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: corp
spec:
  selfSigned: {}
`))
	mallory, err := stack.UserKubeconfig("mallory")
	require.NoError(t, err)
	as := func(args ...string) (string, string, error) {
		return stack.KubectlWith(t.Context(), mallory, args...)
	}
	require.Eventually(t, func() bool {
		out, _, _ := as("auth", "can-i", "create", "rootshards.operator.kcp.io", "-n", ns)
		return strings.TrimSpace(out) == "yes"
	}, time.Minute, time.Second, "the binding reaches the authorizer")
	out, _, err := as("auth", "can-i", "create", "deployments", "-n", ns)
	require.Error(t, err)
	assert.Equal(t, "no", strings.TrimSpace(out), "mallory may not create Deployments herself")

	// create posts a RootShard as mallory; kubectl's -v=6 log shows the response status.
	create := func(name, extra string) (string, error) {
		_, stderr, err := as("create", "-v=6", "-n", ns, "-f", writeManifest(t, framework.RootShardManifest(name, "kcp.example.com", 6443)+extra))
		return stderr, err
	}
	tests := []struct {
		name   string
		object string
		extra  string
		status string
		says   []string
	}{
		{
			name: "a hostPath volume", object: "hostpath",
			extra: `  extraVolumes:
  - name: node
    hostPath: {path: /}
  extraVolumeMounts:
  - {name: node, mountPath: /host}
`,
			status: "422 Unprocessable Entity",
			says:   []string{`The RootShard "hostpath" is invalid`, "spec.extraVolumes[0].hostPath: Forbidden"},
		},
		{
			name: "a toleration of every taint", object: "tolerations",
			extra: `  deploymentTemplate:
    spec:
      template:
        spec:
          tolerations: [{operator: Exists}]
`,
			status: "422 Unprocessable Entity",
			says:   []string{"spec.deploymentTemplate.spec.template.spec.tolerations[0].key: Forbidden"},
		},
		{
			name: "an unconfined AppArmor profile", object: "apparmor",
			extra: `  deploymentTemplate:
    spec:
      template:
        metadata:
          annotations: {container.apparmor.security.beta.kubernetes.io/kcp: unconfined}
`,
			status: "422 Unprocessable Entity",
			says:   []string{"spec.deploymentTemplate.spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/kcp]: Forbidden"},
		},
		{
			name: "the host network", object: "hostnetwork",
			extra: `  deploymentTemplate:
    spec:
      template:
        spec:
          hostNetwork: true
`,
			status: "400 Bad Request",
			says:   []string{`unknown field "spec.deploymentTemplate.spec.template.spec.hostNetwork"`},
		},
		{
			name: "a privileged container", object: "privileged",
			extra: `  deploymentTemplate:
    spec:
      template:
        spec:
          containers: [{name: kcp, securityContext: {privileged: true}}]
`,
			status: "400 Bad Request",
			says:   []string{`unknown field "spec.deploymentTemplate.spec.template.spec.containers"`},
		},
		{
			name: "an image of her choice", object: "image",
			extra: `  image: {repository: busybox, tag: latest}
`,
			status: "403 Forbidden",
			says:   []string{`user "mallory" may not set spec.image.repository to busybox without create on deployments.apps`},
		},
		{
			name: "a Service on every node", object: "nodeport",
			extra: `  serviceTemplate:
    spec: {type: NodePort}
`,
			status: "403 Forbidden",
			says:   []string{"spec.serviceTemplate.spec.type to NodePort without create on services"},
		},
		{
			name: "an issuer she may not use", object: "issuer",
			extra: `  certificates:
    issuerRef: {name: corp}
`,
			status: "403 Forbidden",
			says: []string{`rootshards.operator.kcp.io "issuer" is forbidden`,
				`spec.certificates.issuerRef to Issuer/corp without create on certificates.cert-manager.io in namespace "deputy"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stderr, err := create(tc.object, tc.extra)
			require.Error(t, err, "refused")
			assert.Contains(t, stderr, tc.status)
			for _, s := range tc.says {
				assert.Contains(t, stderr, s)
			}
		})
	}
	out = kubectl(t, "get", "rootshards", "-n", ns, "-o", "name")
	assert.Empty(t, strings.TrimSpace(out), "nothing refused was stored")

	// A VirtualWorkspace's command runs with the setup's identities mounted: only someone who
	// could create the Deployment may choose it.
	_, vwErr, err := as("create", "-v=6", "-n", ns, "-f", writeManifest(t, `apiVersion: operator.kcp.io/v1alpha1
kind: VirtualWorkspace
metadata:
  name: own-binary
spec:
  target: {rootShardRef: {name: issuer}}
  external: {hostname: vw.example.com}
  command: [/bin/sh, -c, "cat /etc/kcp-virtual-workspaces/*/tls.key"]
`))
	require.Error(t, err, "refused")
	assert.Contains(t, vwErr, "403 Forbidden")
	assert.Contains(t, vwErr, `spec.command to /bin/sh -c cat /etc/kcp-virtual-workspaces/*/tls.key without create on deployments.apps`)

	kubectl(t, "create", "role", "issues-certificates", "-n", ns, "--verb=create", "--resource=certificates.cert-manager.io")
	kubectl(t, "create", "rolebinding", "mallory-issues", "-n", ns, "--role=issues-certificates", "--user=mallory")
	var stderr string
	require.Eventually(t, func() bool {
		stderr, err = create("issuer", "  certificates:\n    issuerRef: {name: corp}\n")
		return err == nil
	}, time.Minute, time.Second, "the issuer is hers to use once a Role grants create on certificates: %s", stderr)
	assert.Contains(t, stderr, "201 Created")

	// What the server realizes for her runs restricted, without a ServiceAccount token.
	require.Eventually(t, func() bool {
		_, err := stack.Kubectl(t.Context(), "get", "deployment", "issuer-kcp", "-n", ns)
		return err == nil
	}, 2*time.Minute, time.Second, "the Deployment is realized")
	pod := kubectl(t, "get", "deployment", "issuer-kcp", "-n", ns, "-o",
		"jsonpath={.spec.template.spec.automountServiceAccountToken} {.spec.template.spec.hostNetwork} {.spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation} {.spec.template.spec.containers[0].securityContext.seccompProfile.type}")
	assert.Equal(t, "false  false RuntimeDefault", pod)
}
