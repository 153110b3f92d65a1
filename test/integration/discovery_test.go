package integration

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestDiscovery checks what kubectl learns about the group: the seven resources, their
// singular names, the kcp category, the verbs, the status and kubeconfig subresources, and
// that the self-service roles cover them.
func TestDiscovery(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	defer s.stop()
	dc, err := discovery.NewDiscoveryClientForConfig(s.config)
	require.NoError(t, err)

	list, err := dc.ServerResourcesForGroupVersion(operatorv1alpha1.SchemeGroupVersion.String())
	require.NoError(t, err)
	got := map[string]bool{}
	for _, r := range list.APIResources {
		got[r.Name] = true
		if r.Name == "rootshards" {
			assert.Equal(t, "rootshard", r.SingularName)
			assert.Equal(t, "RootShard", r.Kind)
			assert.True(t, r.Namespaced)
			assert.Equal(t, []string{"kcp"}, r.Categories)
			assert.ElementsMatch(t, []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}, []string(r.Verbs))
		}
		if r.Name == "frontproxies" {
			assert.Equal(t, "frontproxy", r.SingularName)
		}
		if r.Name == "virtualworkspaces" {
			assert.Equal(t, "virtualworkspace", r.SingularName)
			assert.Equal(t, "VirtualWorkspace", r.Kind)
			assert.Equal(t, []string{"kcp"}, r.Categories)
		}
		if r.Name == "links" {
			assert.Equal(t, "link", r.SingularName)
			assert.Equal(t, "Link", r.Kind)
			assert.True(t, r.Namespaced)
			assert.Equal(t, []string{"kcp"}, r.Categories)
			assert.Empty(t, r.ShortNames)
			assert.ElementsMatch(t, []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}, []string(r.Verbs))
		}
	}
	for _, want := range []string{
		"rootshards", "rootshards/status", "shards", "shards/status", "frontproxies", "frontproxies/status",
		"cacheservers", "cacheservers/status", "kubeconfigs", "kubeconfigs/status",
		"virtualworkspaces", "virtualworkspaces/status", "links", "links/status",
		"rootshards/kubeconfig", "shards/kubeconfig", "frontproxies/kubeconfig",
		"rootshards/rotation", "cacheservers/rotation",
		"rootshards/backup", "shards/backup",
	} {
		assert.True(t, got[want], "discovery lacks %s", want)
	}
	assert.Len(t, got, 21, "no other resource: %v", got)

	// The self-service roles cover every resource the server serves: viewers read each one
	// and its status, editors manage each one but links, which kcp-setups-link manages, and
	// the kubeconfig subresources are minted.
	roles := selfServiceRoles(t)
	for resource := range got {
		base, sub, _ := strings.Cut(resource, "/")
		switch sub {
		case "":
			assert.Contains(t, roles["kcp-setups-view"], resource, "viewers read %s", resource)
			if resource == "links" {
				assert.Contains(t, roles["kcp-setups-link"], resource, "kcp-setups-link manages links")
				assert.NotContains(t, roles["kcp-setups-edit"], resource, "editing setups admits no member")
				continue
			}
			assert.Contains(t, roles["kcp-setups-edit"], resource, "editors manage %s", resource)
		case "status":
			assert.Contains(t, roles["kcp-setups-view"], resource, "viewers read the status of %s", base)
		case "kubeconfig":
			assert.Contains(t, roles["kcp-setups-kubeconfig"], resource, "editors mint through %s", resource)
		case "rotation":
			assert.Contains(t, roles["kcp-setups-rotation"], resource, "admins rotate through %s", resource)
			assert.NotContains(t, roles["kcp-setups-edit"], resource, "editing a spec grants no rotation")
		case "backup":
			assert.Contains(t, roles["kcp-setups-backup"], resource, "admins ask for snapshots through %s", resource)
			assert.NotContains(t, roles["kcp-setups-edit"], resource, "editing a spec grants no snapshot")
		default:
			t.Errorf("no self-service rule for the subresource %s", resource)
		}
	}
}

// The self-service roles grant our group alone: never a Secret, so that a team bound to them
// in its namespace reads no reference Secret, nor a copy of one, of any namespace (issue 15:
// holding a shard-join Secret is holding the power to add a shard). Kubernetes' own roles
// decide who reads Secrets.
func TestSelfServiceRolesGrantNoSecret(t *testing.T) {
	data, err := os.ReadFile("../../artifacts/deploy/roles.yaml")
	require.NoError(t, err)
	rules := 0
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var role rbacv1.ClusterRole
		require.NoError(t, yaml.Unmarshal([]byte(doc), &role))
		assert.Nil(t, role.AggregationRule, "%s aggregates other roles", role.Name)
		for _, rule := range role.Rules {
			rules++
			assert.Equal(t, []string{operatorv1alpha1.GroupName}, rule.APIGroups, "%s grants outside %s", role.Name, operatorv1alpha1.GroupName)
			assert.NotContains(t, rule.Resources, "*", "%s grants every resource", role.Name)
			assert.NotContains(t, rule.Resources, "secrets", role.Name)
			assert.Empty(t, rule.NonResourceURLs, role.Name)
		}
	}
	require.NotZero(t, rules)
}

// selfServiceRoles reads artifacts/deploy/roles.yaml: the resources of the operator.kcp.io
// rules of each ClusterRole, by name.
func selfServiceRoles(t *testing.T) map[string][]string {
	t.Helper()
	data, err := os.ReadFile("../../artifacts/deploy/roles.yaml")
	require.NoError(t, err)
	roles := map[string][]string{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var role rbacv1.ClusterRole
		require.NoError(t, yaml.Unmarshal([]byte(doc), &role))
		for _, rule := range role.Rules {
			if slices.Contains(rule.APIGroups, operatorv1alpha1.GroupName) {
				roles[role.Name] = append(roles[role.Name], rule.Resources...)
			}
		}
	}
	require.NotEmpty(t, roles["kcp-setups-view"], "roles.yaml has no kcp-setups-view")
	return roles
}

// TestOnlyAdminsTakeSnapshots: a snapshot holds every workspace of the installation, so the
// backup subresource (create, and get, which a restore from another setup's store asks) is
// granted by kcp-setups-backup alone, which aggregates into admin only: no role that edit
// aggregates grants it.
func TestOnlyAdminsTakeSnapshots(t *testing.T) {
	data, err := os.ReadFile("../../artifacts/deploy/roles.yaml")
	require.NoError(t, err)
	var granting []string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var role rbacv1.ClusterRole
		require.NoError(t, yaml.Unmarshal([]byte(doc), &role))
		for _, rule := range role.Rules {
			if !slices.ContainsFunc(rule.Resources, func(r string) bool { return strings.HasSuffix(r, "/backup") || r == "*" || strings.HasSuffix(r, "/*") }) {
				continue
			}
			granting = append(granting, role.Name)
			assert.ElementsMatch(t, []string{"rootshards/backup", "shards/backup"}, rule.Resources, role.Name)
			assert.ElementsMatch(t, []string{"create", "get"}, rule.Verbs, role.Name)
			assert.Empty(t, role.Labels["rbac.authorization.k8s.io/aggregate-to-edit"], "%s aggregates into edit", role.Name)
			assert.Equal(t, "true", role.Labels["rbac.authorization.k8s.io/aggregate-to-admin"], role.Name)
		}
	}
	assert.Equal(t, []string{"kcp-setups-backup"}, granting)
	roles := selfServiceRoles(t)
	for _, resource := range []string{"rootshards/backup", "shards/backup"} {
		assert.NotContains(t, roles["kcp-setups-edit"], resource, "kcp-setups-edit lacks %s", resource)
	}
}

// TestOnlyAdminsTrust: trust on RootShards (an identity source, an etcd without TLS or a
// shardBaseURL on a FrontProxy or Shard, docs/security.md) is granted by kcp-setups-trust,
// which aggregates into admin only; no role that edit aggregates grants it.
func TestOnlyAdminsTrust(t *testing.T) {
	data, err := os.ReadFile("../../artifacts/deploy/roles.yaml")
	require.NoError(t, err)
	var trusting []string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var role rbacv1.ClusterRole
		require.NoError(t, yaml.Unmarshal([]byte(doc), &role))
		for _, rule := range role.Rules {
			if slices.Contains(rule.Verbs, "trust") || slices.Contains(rule.Verbs, "*") {
				trusting = append(trusting, role.Name)
				assert.Equal(t, []string{"rootshards"}, rule.Resources, role.Name)
				assert.Empty(t, role.Labels["rbac.authorization.k8s.io/aggregate-to-edit"], "%s aggregates into edit", role.Name)
				assert.Equal(t, "true", role.Labels["rbac.authorization.k8s.io/aggregate-to-admin"], role.Name)
			}
		}
	}
	assert.Equal(t, []string{"kcp-setups-trust"}, trusting)
}

// TestOnlyTheLinkRoleLinks: declaring a remote consumer (a Link, and the verb link on a
// RootShard that it asks, docs/security.md) is granted by kcp-setups-link alone, which
// aggregates into no built-in role: neither edit nor admin has a namespace's team add members.
func TestOnlyTheLinkRoleLinks(t *testing.T) {
	data, err := os.ReadFile("../../artifacts/deploy/roles.yaml")
	require.NoError(t, err)
	var linking []string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var role rbacv1.ClusterRole
		require.NoError(t, yaml.Unmarshal([]byte(doc), &role))
		for _, rule := range role.Rules {
			writes := slices.ContainsFunc(rule.Verbs, func(v string) bool { return !slices.Contains([]string{"get", "list", "watch"}, v) })
			if slices.Contains(rule.Verbs, "link") || slices.Contains(rule.Verbs, "*") || writes && slices.Contains(rule.Resources, "links") {
				linking = append(linking, role.Name)
				for k := range role.Labels {
					assert.NotContains(t, k, "aggregate-to", "%s aggregates into a built-in role", role.Name)
				}
			}
			if slices.Contains(rule.Verbs, "link") {
				assert.Equal(t, []string{"rootshards"}, rule.Resources, role.Name)
			}
		}
	}
	assert.Equal(t, []string{"kcp-setups-link", "kcp-setups-link"}, linking, "its rule on links and its rule on rootshards")
}
