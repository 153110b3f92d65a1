package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

// TestTenantCannotEscalate has mallory, bound only to kcp-setups-edit and
// kcp-setups-kubeconfig in her namespace, try through kubectl what issue 25 found the server
// would do for her beyond her own rights, with real RBAC answering. Each row is refused with
// the status it gets, the field path and the missing right, and nothing is stored; the same
// manifest passes a server-side dry run for the namespace's admin, who holds every right. A
// second user, who may create Shards but may not use the RootShard, is refused a Shard of
// it; mallory, whose role grants use in her namespace, is not.
func TestTenantCannotEscalate(t *testing.T) {
	parallel(t, sharedRoles)
	withSelfServiceRoles(t)
	ns := namespace(t, "tenant")
	kubectl(t, "create", "rolebinding", "setups", "-n", ns, "--clusterrole=kcp-setups-edit", "--user=mallory")
	kubectl(t, "create", "rolebinding", "mint", "-n", ns, "--clusterrole=kcp-setups-kubeconfig", "--user=mallory")
	givenRootShard(t, ns, until())
	// A copy of another installation's join Secret, which mallory may see listed but not read.
	kubectl(t, "create", "secret", "generic", "remote-join", "-n", ns, "--from-literal=kubeconfig=placeholder")
	kubectl(t, "label", "secret", "remote-join", "-n", ns, "operator.kcp.io/reference=shard-join")

	mallory, err := stack.UserKubeconfig("mallory")
	require.NoError(t, err)
	as := func(kubeconfig string, args ...string) (string, error) {
		_, stderr, err := stack.KubectlWith(t.Context(), kubeconfig, args...)
		return stderr, err
	}
	require.Eventually(t, func() bool {
		out, _, _ := stack.KubectlWith(t.Context(), mallory, "auth", "can-i", "use", "rootshards.operator.kcp.io/root", "-n", ns)
		return strings.TrimSpace(out) == "yes"
	}, time.Minute, time.Second, "the bindings reach the authorizer")

	rootShardWith := func(name, extra string) string {
		return framework.RootShardManifest(name, "kcp.example.com", 6443) + extra
	}
	tests := []struct {
		name     string
		manifest string
		status   string
		says     []string
	}{
		{
			name: "a managed etcd of her image trusted by kcp's storage",
			manifest: strings.Replace(rootShardWith("etcd-image", ""), "    endpoints: [https://etcd.example.com:2379]\n",
				"    managed:\n      image: {repository: registry.example.com/evil, tag: latest}\n", 1),
			status: "403 Forbidden",
			says:   []string{`user "mallory" may not set spec.etcd.managed.image.repository to registry.example.com/evil without create on statefulsets.apps in namespace "` + ns + `"`},
		},
		{
			name: "a path mapping through the proxy's own identity",
			manifest: `apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata:
  name: mapping
spec:
  rootShard: {ref: {name: root}}
  additionalPathMappings:
  - path: /clusters/
    backend: https://root-kcp:6443
    proxy_client_cert: /etc/kcp-front-proxy/kubeconfig-client/tls.crt
    proxy_client_key: /etc/kcp-front-proxy/kubeconfig-client/tls.key
`,
			status: "422 Unprocessable Entity",
			says: []string{"spec.additionalPathMappings[0].proxy_client_cert: Forbidden: must be a file in a volume of spec.extraVolumes",
				"spec.additionalPathMappings[0].proxy_client_key: Forbidden"},
		},
		{
			name: "a path mapping to another namespace",
			manifest: `apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata:
  name: elsewhere
spec:
  rootShard: {ref: {name: root}}
  additionalPathMappings:
  - {path: /services/x/, backend: "https://root-kcp.payments.svc:6443"}
`,
			status: "422 Unprocessable Entity",
			says:   []string{`spec.additionalPathMappings[0].backend: Forbidden: must be a Service of the FrontProxy's namespace "` + ns + `"`},
		},
		{
			name: "a copy of a join Secret she may not read",
			manifest: `apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: remote
spec:
  rootShard: {secretRef: {name: remote-join}}
  etcd: {endpoints: ["https://etcd-shard:2379"]}
`,
			status: "403 Forbidden",
			says:   []string{`spec.rootShard.secretRef to Secret/remote-join without get on secrets "remote-join"`},
		},
		{
			name: "a CA Secret's template that a replicator acts on",
			manifest: rootShardWith("reflected", `  certificateTemplates:
    server-ca:
      spec:
        secretTemplate:
          annotations: {reflector.v1.k8s.emberstack.com/reflection-allowed: "true"}
`),
			status: "403 Forbidden",
			says:   []string{"spec.certificateTemplates[server-ca].spec.secretTemplate to reflector.v1.k8s.emberstack.com/reflection-allowed without patch on secrets"},
		},
		{
			name: "a CA Secret labelled as a reference copy",
			manifest: rootShardWith("labelled", `  certificateTemplates:
    server-ca:
      spec:
        secretTemplate:
          labels: {operator.kcp.io/reference: shard-join}
`),
			status: "422 Unprocessable Entity",
			says:   []string{"spec.certificateTemplates[server-ca].spec.secretTemplate.labels[operator.kcp.io/reference]: Forbidden: the operator.kcp.io/ keys are the server's own"},
		},
		{
			name:     "kcp's arguments",
			manifest: rootShardWith("args", "  extraArgs: [--authorization-always-allow-paths=/clusters]\n"),
			status:   "403 Forbidden",
			says:     []string{"spec.extraArgs to --authorization-always-allow-paths=/clusters without create on deployments.apps"},
		},
		{
			name: "pods that join another team's Services",
			manifest: rootShardWith("labels", `  deploymentTemplate:
    spec:
      template:
        metadata:
          labels: {app: payments}
`),
			status: "403 Forbidden",
			says:   []string{"spec.deploymentTemplate.spec.template.metadata.labels to app without create on deployments.apps"},
		},
		{
			name: "another team's volume claim",
			manifest: rootShardWith("claim", `  extraVolumes:
  - name: data
    persistentVolumeClaim: {claimName: payments-db}
`),
			status: "403 Forbidden",
			says:   []string{`spec.extraVolumes[0].persistentVolumeClaim.claimName to PersistentVolumeClaim/payments-db without get on persistentvolumeclaims "payments-db"`},
		},
		{
			name:     "two billion pods",
			manifest: rootShardWith("replicas", "  replicas: 2000000000\n"),
			status:   "422 Unprocessable Entity",
			says:     []string{"spec.replicas: Invalid value: 2000000000: must be no more than 100, the server's --max-replicas"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := writeManifest(t, tc.manifest)
			stderr, err := as(mallory, "create", "-v=6", "-n", ns, "-f", file)
			require.Error(t, err, "refused")
			assert.Contains(t, stderr, tc.status)
			for _, s := range tc.says {
				assert.Contains(t, stderr, s)
			}
			if tc.status == "403 Forbidden" {
				// The namespace's admin holds the right: the same manifest passes.
				out, err := stack.Kubectl(t.Context(), "create", "--dry-run=server", "-n", ns, "-f", file)
				assert.NoError(t, err, "%s", out)
			}
		})
	}
	for _, kind := range []string{"rootshards", "frontproxies", "shards"} {
		names := nonEmptyLines(kubectl(t, "get", kind, "-n", ns, "-o", "name"))
		if kind == "rootshards" {
			assert.Equal(t, []string{"rootshard.operator.kcp.io/root"}, names, "nothing refused was stored")
		} else {
			assert.Empty(t, names, "nothing refused was stored")
		}
	}

	// bob may create Shards, and nothing else: joining the RootShard needs use on it.
	kubectl(t, "create", "role", "shards-only", "-n", ns, "--verb=create", "--resource=shards.operator.kcp.io")
	kubectl(t, "create", "rolebinding", "bob", "-n", ns, "--role=shards-only", "--user=bob")
	bob, err := stack.UserKubeconfig("bob")
	require.NoError(t, err)
	shard := writeManifest(t, shardManifest)
	var stderr string
	require.Eventually(t, func() bool {
		stderr, _ = as(bob, "create", "-v=6", "-n", ns, "-f", shard)
		return strings.Contains(stderr, "403 Forbidden") && strings.Contains(stderr, "spec.rootShard.ref")
	}, time.Minute, time.Second, "bob is refused the Shard for want of use: %s", stderr)
	assert.Contains(t, stderr, `user "bob" may not set spec.rootShard.ref to RootShard/root without use on rootshards.operator.kcp.io "root" in namespace "`+ns+`"`)

	// Granting use on that one RootShard by name is enough.
	// kubectl create role refuses a verb that discovery does not list, so the Role is a
	// manifest, as docs/security.md shows it ("Granting use").
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: use-root
rules:
- apiGroups: [operator.kcp.io]
  resources: [rootshards]
  resourceNames: [root]
  verbs: [use]
`))
	kubectl(t, "create", "rolebinding", "bob-uses-root", "-n", ns, "--role=use-root", "--user=bob")
	require.Eventually(t, func() bool {
		stderr, _ = as(bob, "create", "--dry-run=server", "-v=6", "-n", ns, "-f", shard)
		return strings.Contains(stderr, "201 Created")
	}, time.Minute, time.Second, "use on root by name lets bob join it: %s", stderr)

	// mallory's role grants use in her namespace.
	stderr, err = as(mallory, "create", "--dry-run=server", "-v=6", "-n", ns, "-f", shard)
	require.NoError(t, err, stderr)
	assert.Contains(t, stderr, "201 Created")
}
