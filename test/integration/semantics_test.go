package integration

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	acv1alpha1 "github.com/kcp-setups/apiserver/pkg/generated/applyconfiguration/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
)

// TestAPISemantics covers what a client expects of a built-in resource beyond CRUD.
func TestAPISemantics(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	defer s.stop()
	ops := s.client.OperatorV1alpha1()

	t.Run("server-side apply twice is a no-op, a second manager conflicts", func(t *testing.T) {
		ctx := t.Context()
		apply := acv1alpha1.RootShard("applied", namespace).WithSpec(acv1alpha1.RootShardSpec().
			WithEtcd(acv1alpha1.EtcdConfig().WithEndpoints("https://etcd:2379")).
			WithExternal(acv1alpha1.ExternalConfig().WithHostname("kcp.example.com")))

		first, err := ops.RootShards(namespace).Apply(ctx, apply, metav1.ApplyOptions{FieldManager: "platform"})
		require.NoError(t, err)
		assert.Equal(t, "cluster.local", first.Spec.ClusterDomain, "defaults apply to applied objects")
		second, err := ops.RootShards(namespace).Apply(ctx, apply, metav1.ApplyOptions{FieldManager: "platform"})
		require.NoError(t, err)
		assert.Equal(t, first.ResourceVersion, second.ResourceVersion, "the second apply must not write")
		assert.EqualValues(t, 1, second.Generation)

		other := acv1alpha1.RootShard("applied", namespace).WithSpec(acv1alpha1.RootShardSpec().
			WithExternal(acv1alpha1.ExternalConfig().WithHostname("other.example.com")))
		_, err = ops.RootShards(namespace).Apply(ctx, other, metav1.ApplyOptions{FieldManager: "intruder"})
		require.Error(t, err)
		assert.True(t, apierrors.IsConflict(err), "expected a conflict, got %v", err)
		assert.Contains(t, err.Error(), ".spec.external.hostname")

		forced, err := ops.RootShards(namespace).Apply(ctx, other, metav1.ApplyOptions{FieldManager: "intruder", Force: true})
		require.NoError(t, err)
		assert.Equal(t, "other.example.com", forced.Spec.External.Hostname)
		assert.EqualValues(t, 2, forced.Generation)
	})

	t.Run("dry-run stores nothing", func(t *testing.T) {
		ctx := t.Context()
		created, err := ops.RootShards(namespace).Create(ctx, newRootShard("dry"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		require.NoError(t, err)
		assert.Equal(t, "cluster.local", created.Spec.ClusterDomain, "dry-run still defaults")
		_, err = ops.RootShards(namespace).Get(ctx, "dry", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "expected NotFound, got %v", err)

		// A dry-run update of a stored object changes nothing either.
		stored, err := ops.RootShards(namespace).Create(ctx, newRootShard("wet"), metav1.CreateOptions{})
		require.NoError(t, err)
		stored.Spec.External.Hostname = "changed.example.com"
		_, err = ops.RootShards(namespace).Update(ctx, stored, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		require.NoError(t, err)
		again, err := ops.RootShards(namespace).Get(ctx, "wet", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, "kcp.example.com", again.Spec.External.Hostname)
	})

	t.Run("field selectors", func(t *testing.T) {
		ctx := t.Context()
		for name, rs := range map[string]string{"s-a1": "rs-a", "s-a2": "rs-a", "s-b1": "rs-b"} {
			_, err := ops.Shards(namespace).Create(ctx, newShard(name, rs), metav1.CreateOptions{})
			require.NoError(t, err)
		}
		_, err := ops.FrontProxies(namespace).Create(ctx, newFrontProxy("fp-b", "rs-b"), metav1.CreateOptions{})
		require.NoError(t, err)

		shards, err := ops.Shards(namespace).List(ctx, metav1.ListOptions{FieldSelector: operatorv1alpha1.RootShardRefField + "=rs-a"})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"s-a1", "s-a2"}, names(t, shards))

		proxies, err := ops.FrontProxies(namespace).List(ctx, metav1.ListOptions{FieldSelector: operatorv1alpha1.RootShardRefField + "=rs-b"})
		require.NoError(t, err)
		assert.Equal(t, []string{"fp-b"}, names(t, proxies))

		byName, err := ops.Shards(namespace).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=s-b1"})
		require.NoError(t, err)
		assert.Equal(t, []string{"s-b1"}, names(t, byName))

		_, err = ops.Shards(namespace).List(ctx, metav1.ListOptions{FieldSelector: "spec.clusterDomain=x"})
		assert.True(t, apierrors.IsBadRequest(err), "an unsupported field selector is a 400, got %v", err)
		_, err = ops.RootShards(namespace).List(ctx, metav1.ListOptions{FieldSelector: operatorv1alpha1.RootShardRefField + "=x"})
		assert.True(t, apierrors.IsBadRequest(err), "rootshards have no rootShard field, got %v", err)
	})

	t.Run("table output has the printer columns", func(t *testing.T) {
		ctx := t.Context()
		_, err := ops.Kubeconfigs(namespace).Create(ctx, newKubeconfig("bob", "edge"), metav1.CreateOptions{})
		require.NoError(t, err)
		vw := newVirtualWorkspace("shard-vw", "root")
		vw.Spec.Target = operatorv1alpha1.VirtualWorkspaceTarget{ShardRef: &corev1.LocalObjectReference{Name: "s-a1"}}
		vw.Spec.External.Port = 8443
		_, err = ops.VirtualWorkspaces(namespace).Create(ctx, vw, metav1.CreateOptions{})
		require.NoError(t, err)
		for _, tc := range []struct {
			resource string
			columns  []string
			row      map[string]any
		}{
			{"rootshards", []string{"Name", "Hostname", "Version", "Phase", "Age", "Replicas", "Ready"},
				map[string]any{"Name": "wet", "Hostname": "kcp.example.com", "Version": "", "Replicas": "2", "Ready": "Unknown"}},
			{"shards", []string{"Name", "RootShard", "Phase", "Age"}, map[string]any{"Name": "s-a1", "RootShard": "rs-a"}},
			{"frontproxies", []string{"Name", "RootShard", "Hostname", "Phase", "Age"},
				map[string]any{"Name": "fp-b", "RootShard": "rs-b", "Hostname": "edge.example.com"}},
			{"cacheservers", []string{"Name", "Phase", "Age"}, nil},
			{"kubeconfigs", []string{"Name", "Target", "Secret", "Phase", "Age"},
				map[string]any{"Name": "bob", "Target": "FrontProxy/edge", "Secret": "bob-kubeconfig"}},
			{"virtualworkspaces", []string{"Name", "Target", "URL", "Phase", "Age"},
				map[string]any{"Name": "shard-vw", "Target": "Shard/s-a1", "URL": "https://vw.example.com:8443"}},
		} {
			raw, err := ops.RESTClient().Get().Namespace(namespace).Resource(tc.resource).
				SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
			require.NoError(t, err, tc.resource)
			var table metav1.Table
			require.NoError(t, json.Unmarshal(raw, &table))
			var got []string
			for _, c := range table.ColumnDefinitions {
				got = append(got, c.Name)
			}
			assert.Equal(t, tc.columns, got, tc.resource)
			if tc.row == nil {
				continue
			}
			found := false
			for _, r := range table.Rows {
				if r.Cells[0] != tc.row["Name"] {
					continue
				}
				found = true
				for i, c := range table.ColumnDefinitions {
					if want, ok := tc.row[c.Name]; ok {
						assert.Equal(t, want, r.Cells[i], "%s column %s", tc.resource, c.Name)
					}
				}
			}
			assert.True(t, found, "%s: no row for %v", tc.resource, tc.row["Name"])
		}
	})

	t.Run("strict field validation rejects unknown fields", func(t *testing.T) {
		ctx := t.Context()
		body := []byte(`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"CacheServer","metadata":{"name":"strict"},"spec":{"replicaz":1}}`)
		err := ops.RESTClient().Post().Namespace(namespace).Resource("cacheservers").
			Param("fieldValidation", "Strict").Body(body).Do(ctx).Error()
		require.Error(t, err)
		assert.True(t, apierrors.IsBadRequest(err), "got %v", err)
		assert.Contains(t, err.Error(), `unknown field "spec.replicaz"`)
		_, err = ops.CacheServers(namespace).Get(ctx, "strict", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "nothing is stored, got %v", err)
	})

	t.Run("OpenAPI v3 describes the kinds", func(t *testing.T) {
		raw, err := ops.RESTClient().Get().AbsPath("/openapi/v3/apis/operator.kcp.io/v1alpha1").DoRaw(t.Context())
		require.NoError(t, err)
		var doc struct {
			Components struct {
				Schemas map[string]struct {
					Description string                     `json:"description"`
					GVK         []map[string]string        `json:"x-kubernetes-group-version-kind"`
					Properties  map[string]json.RawMessage `json:"properties"`
				} `json:"schemas"`
			} `json:"components"`
		}
		require.NoError(t, json.Unmarshal(raw, &doc))
		kinds := map[string]bool{}
		for _, schema := range doc.Components.Schemas {
			for _, gvk := range schema.GVK {
				if gvk["group"] == operatorv1alpha1.GroupName {
					kinds[gvk["kind"]] = true
				}
			}
		}
		for _, k := range []string{"RootShard", "Shard", "FrontProxy", "CacheServer", "Kubeconfig", "VirtualWorkspace", "Link"} {
			assert.True(t, kinds[k], "no schema with the GVK of %s", k)
		}
	})

	t.Run("immutable fields", func(t *testing.T) {
		ctx := t.Context()
		sh, err := ops.Shards(namespace).Create(ctx, newShard("pinned", "rs-a"), metav1.CreateOptions{})
		require.NoError(t, err)
		sh.Spec.RootShard.Reference = &corev1.LocalObjectReference{Name: "rs-b"}
		_, err = ops.Shards(namespace).Update(ctx, sh, metav1.UpdateOptions{})
		assertInvalid(t, err, "spec.rootShard.ref.name")

		kc, err := ops.Kubeconfigs(namespace).Get(ctx, "bob", metav1.GetOptions{})
		require.NoError(t, err)
		kc.Spec.Target = operatorv1alpha1.KubeconfigTarget{RootShardRef: &corev1.LocalObjectReference{Name: "rs-a"}}
		_, err = ops.Kubeconfigs(namespace).Update(ctx, kc, metav1.UpdateOptions{})
		assertInvalid(t, err, "spec.target")

		vw, err := ops.VirtualWorkspaces(namespace).Create(ctx, newVirtualWorkspace("pinned-vw", "rs-a"), metav1.CreateOptions{})
		require.NoError(t, err)
		vw.Spec.Target = operatorv1alpha1.VirtualWorkspaceTarget{RootShardRef: &corev1.LocalObjectReference{Name: "rs-b"}}
		_, err = ops.VirtualWorkspaces(namespace).Update(ctx, vw, metav1.UpdateOptions{})
		assertInvalid(t, err, "spec.target")

		// Which VirtualWorkspace serves a shard's virtual workspaces may change: a rollout.
		sh, err = ops.Shards(namespace).Get(ctx, "pinned", metav1.GetOptions{})
		require.NoError(t, err)
		sh.Spec.KcpVirtualWorkspace = &corev1.LocalObjectReference{Name: "pinned-vw"}
		_, err = ops.Shards(namespace).Update(ctx, sh, metav1.UpdateOptions{})
		require.NoError(t, err)

		rs, err := ops.RootShards(namespace).Get(ctx, "wet", metav1.GetOptions{})
		require.NoError(t, err)
		rs.Spec.Certificates = &operatorv1alpha1.Certificates{CASecretRef: &corev1.LocalObjectReference{Name: "my-ca"}}
		_, err = ops.RootShards(namespace).Update(ctx, rs, metav1.UpdateOptions{})
		assertInvalid(t, err, "spec.certificates")
	})

	t.Run("warnings reach the client", func(t *testing.T) {
		ctx := t.Context()
		cfg := rest.CopyConfig(s.config)
		warnings := &warningRecorder{}
		cfg.WarningHandler = warnings
		c, err := clientset.NewForConfig(cfg)
		require.NoError(t, err)
		vw := newVirtualWorkspace("custom-vw", "rs-a")
		vw.Spec.Command = []string{"/access-vw"}
		_, err = c.OperatorV1alpha1().VirtualWorkspaces(namespace).Create(ctx, vw, metav1.CreateOptions{})
		require.NoError(t, err)
		require.Len(t, warnings.messages, 1)
		assert.Contains(t, warnings.messages[0], "spec.command runs a server other than kcp's own, and without spec.kubeconfigSecretRef")
	})

	t.Run("kcp-operator's SDK shapes are stored as what they mean, and its lenient shapes warn", func(t *testing.T) {
		ctx := t.Context()
		cfg := rest.CopyConfig(s.config)
		warnings := &warningRecorder{}
		cfg.WarningHandler = warnings
		c, err := clientset.NewForConfig(cfg)
		require.NoError(t, err)
		rs := newRootShard("sdk-shaped")
		rs.Spec.Cache = &operatorv1alpha1.CacheConfig{}
		rs.Spec.Certificates = &operatorv1alpha1.Certificates{}
		rs.Spec.Etcd.Endpoints = []string{"etcd.example.com:2379"}
		rs.Spec.Etcd.Prefix = "sdk"
		rs, err = c.OperatorV1alpha1().RootShards(namespace).Create(ctx, rs, metav1.CreateOptions{})
		require.NoError(t, err)
		assert.Nil(t, rs.Spec.Certificates, "certificates: {} is stored as unset: the bootstrap PKI")
		assert.Equal(t, &operatorv1alpha1.CacheConfig{}, rs.Spec.Cache, "cache: {} is the embedded cache")
		require.Len(t, warnings.messages, 2)
		assert.Contains(t, warnings.messages[0], `spec.etcd.endpoints[0]: "etcd.example.com:2379" has no scheme`)
		assert.Contains(t, warnings.messages[1], `spec.etcd.prefix: "sdk" does not start with '/'`)

		rs.Spec.Certificates = &operatorv1alpha1.Certificates{}
		updated, err := c.OperatorV1alpha1().RootShards(namespace).Update(ctx, rs, metav1.UpdateOptions{})
		require.NoError(t, err, "the same again, as the SDK sends it: certificates stays immutable")
		assert.Equal(t, rs.Generation, updated.Generation, "no change")
	})

	t.Run("kubeconfig authorization is accepted, its deprecated cluster warned about, and its status field is validated", func(t *testing.T) {
		ctx := t.Context()
		cfg := rest.CopyConfig(s.config)
		warnings := &warningRecorder{}
		cfg.WarningHandler = warnings
		c, err := clientset.NewForConfig(cfg)
		require.NoError(t, err)
		kc := newKubeconfig("bound", "edge")
		kc.Spec.Authorization = &operatorv1alpha1.KubeconfigAuthorization{ClusterRoleBindings: operatorv1alpha1.KubeconfigClusterRoleBindings{
			Cluster: "root:team-a", ClusterRoles: []string{"cluster-admin", "system:kcp:workspace:access"},
		}}
		kc, err = c.OperatorV1alpha1().Kubeconfigs(namespace).Create(ctx, kc, metav1.CreateOptions{})
		require.NoError(t, err, "the controller binds the roles in kcp")
		assert.Equal(t, []string{"cluster-admin", "system:kcp:workspace:access"}, kc.Spec.Authorization.ClusterRoleBindings.ClusterRoles)
		require.Len(t, warnings.messages, 1)
		assert.Contains(t, warnings.messages[0], "spec.authorization.clusterRoleBindings.cluster is deprecated")

		kc.Status.Authorization = &operatorv1alpha1.KubeconfigAuthorizationStatus{ProvisionedCluster: "root:team-a"}
		kc, err = ops.Kubeconfigs(namespace).UpdateStatus(ctx, kc, metav1.UpdateOptions{})
		require.NoError(t, err)
		assert.Equal(t, "root:team-a", kc.Status.Authorization.ProvisionedCluster)
		kc.Status.Authorization.ProvisionedCluster = "root:Team_A"
		_, err = ops.Kubeconfigs(namespace).UpdateStatus(ctx, kc, metav1.UpdateOptions{})
		assertInvalid(t, err, "status.authorization.provisionedCluster")
	})

	t.Run("watch sees events across kinds from a resource version", func(t *testing.T) {
		ctx := t.Context()
		list, err := ops.CacheServers(namespace).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		w, err := ops.CacheServers(namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		require.NoError(t, err)
		defer w.Stop()
		_, err = ops.CacheServers(namespace).Create(ctx, newCacheServer("watched"), metav1.CreateOptions{})
		require.NoError(t, err)
		expectEvent(t, w, "ADDED", "watched")
	})
}

// warningRecorder keeps the Warning headers a client receives.
type warningRecorder struct {
	mu       sync.Mutex
	messages []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, message string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.messages = append(w.messages, message)
}
