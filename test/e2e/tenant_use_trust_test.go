package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

// TestUseIsNotTrust plays issue 38 (6) as eve would, through kubectl and real RBAC: eve may
// use the RootShard of her own namespace (kcp-setups-edit), and the RootShard of another
// namespace by name (a Role as docs/security.md "Granting use" writes it, with create on
// Shards and FrontProxies there). Neither lets her say who a user is (an identity source on
// a FrontProxy or Shard), keep a shard's data in an etcd without TLS, or choose a shard's
// base URL: each is refused with a 403 naming the field and the missing trust, and nothing
// is stored; the namespace's admin, whose role aggregates kcp-setups-trust, passes the same
// manifests. Passing on system:masters is a 422 for anyone, a RootShard's proxy is under
// --max-replicas, and a FrontProxy's own dropGroups reach kcp-front-proxy after kcp's
// default drop list, never in its place.
func TestUseIsNotTrust(t *testing.T) {
	parallel(t, sharedRoles)
	withSelfServiceRoles(t)
	own := namespace(t, "use-own")
	other := namespace(t, "use-other")
	kubectl(t, "create", "rolebinding", "setups", "-n", own, "--clusterrole=kcp-setups-edit", "--user=eve")
	kubectl(t, "create", "rolebinding", "mint", "-n", own, "--clusterrole=kcp-setups-kubeconfig", "--user=eve")
	kubectl(t, "apply", "-n", other, "-f", writeManifest(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: join-root
rules:
- apiGroups: [operator.kcp.io]
  resources: [shards, frontproxies]
  verbs: [get, list, create]
- apiGroups: [operator.kcp.io]
  resources: [rootshards]
  resourceNames: [root]
  verbs: [use]
`))
	kubectl(t, "create", "rolebinding", "eve-joins-root", "-n", other, "--role=join-root", "--user=eve")
	kubectl(t, "create", "rolebinding", "frank-admin", "-n", other, "--clusterrole=admin", "--user=frank")
	for _, ns := range []string{own, other} {
		givenRootShard(t, ns, until())
	}

	eve, err := stack.UserKubeconfig("eve")
	require.NoError(t, err)
	frank, err := stack.UserKubeconfig("frank")
	require.NoError(t, err)
	canI := func(kubeconfig, ns, verb string) string {
		out, _, _ := stack.KubectlWith(t.Context(), kubeconfig, "auth", "can-i", verb, "rootshards.operator.kcp.io/root", "-n", ns)
		return strings.TrimSpace(out)
	}
	require.Eventually(t, func() bool {
		return canI(eve, own, "use") == "yes" && canI(eve, other, "use") == "yes" && canI(frank, other, "trust") == "yes"
	}, time.Minute, time.Second, "the bindings and the aggregation into admin reach the authorizer")
	assert.Equal(t, "no", canI(eve, own, "trust"), "kcp-setups-edit grants no trust")
	assert.Equal(t, "no", canI(eve, other, "trust"), "use by name grants no trust")

	const trustMissing = ` without trust on rootshards.operator.kcp.io "root"`
	tests := []struct {
		name     string
		manifest string
		status   string
		says     []string
	}{
		{
			name: "a FrontProxy believing her own OIDC issuer",
			manifest: `apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata:
  name: oidc
spec:
  rootShard: {ref: {name: root}}
  auth:
    oidc: {issuerURL: "https://idp.attacker.example", clientID: kcp, groupsClaim: groups}
`,
			status: "403 Forbidden",
			says:   []string{`user "eve" may not set spec.auth.oidc to the OIDC issuer https://idp.attacker.example` + trustMissing},
		},
		{
			name: "a Shard believing her own OIDC issuer",
			manifest: `apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: oidc
spec:
  rootShard: {ref: {name: root}}
  etcd: {endpoints: ["https://etcd-shard:2379"]}
  auth:
    oidc: {issuerURL: "https://idp.attacker.example", clientID: kcp}
`,
			status: "403 Forbidden",
			says:   []string{`user "eve" may not set spec.auth.oidc to the OIDC issuer https://idp.attacker.example` + trustMissing},
		},
		{
			name: "a Shard storing its data in her plain-HTTP etcd",
			manifest: `apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: plain
spec:
  rootShard: {ref: {name: root}}
  etcd: {endpoints: ["http://etcd.attacker.example:2379"]}
`,
			status: "403 Forbidden",
			says:   []string{`user "eve" may not set spec.etcd.endpoints[0] to an etcd without TLS at http://etcd.attacker.example:2379` + trustMissing},
		},
		{
			name: "a Shard at a base URL of her choice",
			manifest: `apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: elsewhere
spec:
  rootShard: {ref: {name: root}}
  etcd: {endpoints: ["https://etcd-shard:2379"]}
  shardBaseURL: https://shard.attacker.example:6443
`,
			status: "403 Forbidden",
			says:   []string{`user "eve" may not set spec.shardBaseURL to https://shard.attacker.example:6443` + trustMissing},
		},
		{
			name: "a FrontProxy passing on system:masters",
			manifest: `apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata:
  name: masters
spec:
  rootShard: {ref: {name: root}}
  auth:
    passOnGroups: [team-a, system:masters]
`,
			status: "422 Unprocessable Entity",
			says:   []string{`spec.auth.passOnGroups[1]: Forbidden: system:masters is always dropped by the front proxy`},
		},
	}
	for _, ns := range []string{own, other} {
		for _, tc := range tests {
			t.Run(ns+"/"+tc.name, func(t *testing.T) {
				file := writeManifest(t, tc.manifest)
				_, stderr, err := stack.KubectlWith(t.Context(), eve, "create", "-v=6", "-n", ns, "-f", file)
				require.Error(t, err, "refused")
				assert.Contains(t, stderr, tc.status)
				for _, s := range tc.says {
					assert.Contains(t, stderr, s)
				}
				assert.NotContains(t, stderr, "without use", "eve may use the RootShard; trust is what she lacks")
				out, err := stack.Kubectl(t.Context(), "create", "--dry-run=server", "-n", ns, "-f", file)
				if tc.status == "403 Forbidden" {
					assert.NoError(t, err, "the admin holds trust: %s", out)
				} else {
					assert.Error(t, err, "nobody passes system:masters on")
				}
				if ns == other && tc.status == "403 Forbidden" {
					_, stderr, err := stack.KubectlWith(t.Context(), frank, "create", "--dry-run=server", "-v=6", "-n", ns, "-f", file)
					assert.NoError(t, err, "the namespace's admin role aggregates kcp-setups-trust: %s", stderr)
				}
			})
		}
	}

	// A path mapping to a Service name of another DNS domain leaves the cluster.
	_, stderr, err := stack.KubectlWith(t.Context(), eve, "create", "-v=6", "-n", own, "-f", writeManifest(t, `apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata:
  name: outside
spec:
  rootShard: {ref: {name: root}}
  additionalPathMappings:
  - {path: /services/x/, backend: "https://x.`+own+`.svc.attacker.example:6443"}
`))
	require.Error(t, err)
	assert.Contains(t, stderr, "422 Unprocessable Entity")
	assert.Contains(t, stderr, `spec.additionalPathMappings[0].backend: Forbidden: must be a Service of this cluster: "attacker.example" is not the cluster's domain "cluster.local"`)

	// Even the admin, who holds trust, may not give a Shard another shard's address.
	out, err := stack.Kubectl(t.Context(), "create", "-n", other, "-f", writeManifest(t, `apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: twin
spec:
  rootShard: {ref: {name: root}}
  etcd: {endpoints: ["https://etcd-shard:2379"]}
  shardBaseURL: https://root-kcp.`+other+`.svc.cluster.local:6443
`))
	require.Error(t, err)
	assert.Contains(t, out, `spec.shardBaseURL: Invalid value: "https://root-kcp.`+other+`.svc.cluster.local:6443": is the base URL of RootShard "root" of this namespace`)

	// Her own RootShard's internal front proxy is under --max-replicas.
	_, stderr, err = stack.KubectlWith(t.Context(), eve, "create", "-v=6", "-n", own, "-f",
		writeManifest(t, framework.RootShardManifest("wide", "kcp.example.com", 6443)+"  proxy:\n    replicas: 2000000000\n"))
	require.Error(t, err)
	assert.Contains(t, stderr, "422 Unprocessable Entity")
	assert.Contains(t, stderr, "spec.proxy.replicas: Invalid value: 2000000000: must be no more than 100, the server's --max-replicas")

	for _, ns := range []string{own, other} {
		for _, kind := range []string{"frontproxies", "shards"} {
			assert.Empty(t, nonEmptyLines(kubectl(t, "get", kind, "-n", ns, "-o", "name")), "nothing refused was stored")
		}
		assert.Equal(t, []string{"rootshard.operator.kcp.io/root"}, nonEmptyLines(kubectl(t, "get", "rootshards", "-n", ns, "-o", "name")))
	}

	// What use does let her: a FrontProxy that drops one more group. kcp-front-proxy gets the
	// defaults of its release, then hers, since the flag replaces the defaults.
	_, stderr, err = stack.KubectlWith(t.Context(), eve, "create", "-v=6", "-n", own, "-f", writeManifest(t, `apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata:
  name: edge
spec:
  rootShard: {ref: {name: root}}
  auth:
    dropGroups: [contractors]
`))
	require.NoError(t, err, stderr)
	var args string
	require.Eventually(t, func() bool {
		args, _ = stack.Kubectl(t.Context(), "get", "deployment", "edge-front-proxy", "-n", own, "-o", "jsonpath={.spec.template.spec.containers[0].args}")
		return strings.Contains(args, "--authentication-drop-groups")
	}, 3*time.Minute, time.Second, "the FrontProxy is realized: %s", args)
	assert.Contains(t, args, `"--authentication-drop-groups=system:masters,system:kcp:logical-cluster-admin,system:kcp:initializer:*,system:kcp:terminator:*,contractors"`)

	// The admin declares a Kubeconfig for alice toward eve's FrontProxy. Moving the FrontProxy
	// would rewrite alice's Secret toward eve's new host: eve, who may not impersonate alice,
	// is refused; the admin, who could declare that Kubeconfig, is not.
	kubectl(t, "apply", "-n", own, "-f", writeManifest(t, `apiVersion: operator.kcp.io/v1alpha1
kind: Kubeconfig
metadata:
  name: alice
spec:
  username: alice
  validity: 24h
  secretRef: {name: alice-kubeconfig}
  target: {frontProxyRef: {name: edge}}
`))
	move := `{"spec":{"external":{"hostname":"edge.attacker.example"}}}`
	_, stderr, err = stack.KubectlWith(t.Context(), eve, "patch", "-v=6", "frontproxy", "edge", "-n", own, "--type=merge", "-p", move)
	require.Error(t, err, "refused")
	assert.Contains(t, stderr, "403 Forbidden")
	assert.Contains(t, stderr, `user "eve" may not change spec.external: the server would rewrite the kubeconfig Secrets of Kubeconfig "alice"`)
	assert.Empty(t, kubectl(t, "get", "frontproxy", "edge", "-n", own, "-o", "jsonpath={.spec.external.hostname}"), "nothing stored")
	out, err = stack.Kubectl(t.Context(), "patch", "--dry-run=server", "frontproxy", "edge", "-n", own, "--type=merge", "-p", move)
	assert.NoError(t, err, "the admin may declare alice's Kubeconfig, and so move it: %s", out)
}
