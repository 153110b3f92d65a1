package integration

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientsetscheme "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/scheme"
)

// object is a pointer to one of our kinds.
type object interface {
	runtime.Object
	metav1.Object
}

// kindClient is what the generated typed client of every kind offers.
type kindClient[T object, L runtime.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	List(context.Context, metav1.ListOptions) (L, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
	UpdateStatus(context.Context, T, metav1.UpdateOptions) (T, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
}

// provisioning is a phase every kind has.
const provisioning = "Provisioning"

// crudCase exercises one kind through its generated client.
type crudCase[T object, L runtime.Object] struct {
	client kindClient[T, L]
	obj    T
	// defaulted checks the stored defaults of the kind.
	defaulted func(t *testing.T, obj T)
	// mutateSpec changes the spec; setStatus writes a status with the given phase.
	mutateSpec func(T)
	setStatus  func(T, string)
	phase      func(T) string
}

func (c crudCase[T, L]) run(t *testing.T) {
	ctx := t.Context()
	name := c.obj.GetName()

	w, err := c.client.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	require.NoError(t, err)
	defer w.Stop()

	// Create: a status sent by the client is dropped and the generation starts at 1.
	c.setStatus(c.obj, provisioning)
	created, err := c.client.Create(ctx, c.obj, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.EqualValues(t, 1, created.GetGeneration())
	assert.Empty(t, c.phase(created), "status must be ignored on create")
	c.defaulted(t, created)
	expectEvent(t, w, watch.Added, name)

	got, err := c.client.Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, created.GetResourceVersion(), got.GetResourceVersion())

	list, err := c.client.List(ctx, metav1.ListOptions{LabelSelector: "team=a"})
	require.NoError(t, err)
	assert.Contains(t, names(t, list), name)
	list, err = c.client.List(ctx, metav1.ListOptions{LabelSelector: "team=b"})
	require.NoError(t, err)
	assert.NotContains(t, names(t, list), name)

	// Update of the spec bumps the generation; a status in the same request is ignored.
	c.mutateSpec(got)
	c.setStatus(got, provisioning)
	updated, err := c.client.Update(ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.EqualValues(t, 2, updated.GetGeneration())
	assert.Empty(t, c.phase(updated), "status must be ignored by the main endpoint")
	expectEvent(t, w, watch.Modified, name)

	// The status endpoint writes the status only: a spec change is dropped and the
	// generation stays, and so are its labels, annotations and finalizers, as a
	// CustomResourceDefinition's status subresource keeps the stored metadata.
	c.setStatus(updated, provisioning)
	c.mutateSpec(updated)
	updated.SetLabels(map[string]string{"team": "b"})
	updated.SetAnnotations(map[string]string{
		operatorv1alpha1.AnnotationAdopt: "anything", operatorv1alpha1.AnnotationDeleteEtcdVolumes: "true",
	})
	updated.SetFinalizers([]string{"example.com/held"})
	statusUpdated, err := c.client.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, provisioning, c.phase(statusUpdated))
	assert.EqualValues(t, 2, statusUpdated.GetGeneration())
	expectEvent(t, w, watch.Modified, name)
	stored, err := c.client.Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.EqualValues(t, 2, stored.GetGeneration(), "a spec change through status must not be stored")
	assertMetadataOf(t, created, stored, "an update of the status")

	// A patch of the status subresource, merge or apply, stores no metadata either.
	for pt, patch := range map[types.PatchType]string{
		types.MergePatchType: `{"metadata":{"labels":null,"annotations":{"operator.kcp.io/adopt":"anything"},"finalizers":["example.com/held"]}}`,
		types.ApplyPatchType: `{"apiVersion":"operator.kcp.io/v1alpha1","kind":"` + kindOf(t, created) + `","metadata":{"name":"` + name +
			`","labels":{"team":"b"},"annotations":{"operator.kcp.io/delete-etcd-volumes":"true"},"finalizers":["example.com/held"]}}`,
	} {
		_, err := c.client.Patch(ctx, name, pt, []byte(patch), metav1.PatchOptions{FieldManager: "status-writer", Force: forceFor(pt)}, "status")
		require.NoError(t, err, "a %s patch of the status", pt)
		stored, err = c.client.Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		assertMetadataOf(t, created, stored, string(pt)+" patch of the status")
	}

	require.NoError(t, c.client.Delete(ctx, name, metav1.DeleteOptions{}))
	expectEvent(t, w, watch.Deleted, name)
	_, err = c.client.Get(ctx, name, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "expected NotFound, got %v", err)
}

// assertMetadataOf asserts that stored has the labels, annotations and finalizers of want.
func assertMetadataOf(t *testing.T, want, stored metav1.Object, what string) {
	t.Helper()
	assert.Equal(t, want.GetLabels(), stored.GetLabels(), "%s must not store labels", what)
	assert.Equal(t, want.GetAnnotations(), stored.GetAnnotations(), "%s must not store annotations", what)
	assert.Equal(t, want.GetFinalizers(), stored.GetFinalizers(), "%s must not store finalizers", what)
}

// kindOf is the kind of one of our objects, by its Go type.
func kindOf(t *testing.T, obj runtime.Object) string {
	t.Helper()
	gvks, _, err := clientsetscheme.Scheme.ObjectKinds(obj)
	require.NoError(t, err)
	return gvks[0].Kind
}

// forceFor is Force for an apply patch, which alone takes it.
func forceFor(pt types.PatchType) *bool {
	if pt != types.ApplyPatchType {
		return nil
	}
	force := true
	return &force
}

func TestCRUDEveryKind(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	defer s.stop()
	ops := s.client.OperatorV1alpha1()

	t.Run("RootShard", crudCase[*operatorv1alpha1.RootShard, *operatorv1alpha1.RootShardList]{
		client: ops.RootShards(namespace),
		obj:    newRootShard("root"),
		defaulted: func(t *testing.T, o *operatorv1alpha1.RootShard) {
			assert.Equal(t, "cluster.local", o.Spec.ClusterDomain)
			assert.EqualValues(t, 6443, o.Spec.External.Port)
		},
		mutateSpec: func(o *operatorv1alpha1.RootShard) { o.Spec.ExtraArgs = append(o.Spec.ExtraArgs, "--v=2") },
		setStatus:  func(o *operatorv1alpha1.RootShard, p string) { o.Status.Phase = operatorv1alpha1.Phase(p) },
		phase:      func(o *operatorv1alpha1.RootShard) string { return string(o.Status.Phase) },
	}.run)

	t.Run("Shard", crudCase[*operatorv1alpha1.Shard, *operatorv1alpha1.ShardList]{
		client:     ops.Shards(namespace),
		obj:        newShard("shard-1", "root"),
		defaulted:  func(t *testing.T, o *operatorv1alpha1.Shard) { assert.Equal(t, "cluster.local", o.Spec.ClusterDomain) },
		mutateSpec: func(o *operatorv1alpha1.Shard) { o.Spec.ExtraArgs = append(o.Spec.ExtraArgs, "--v=2") },
		setStatus:  func(o *operatorv1alpha1.Shard, p string) { o.Status.Phase = operatorv1alpha1.Phase(p) },
		phase:      func(o *operatorv1alpha1.Shard) string { return string(o.Status.Phase) },
	}.run)

	t.Run("FrontProxy", crudCase[*operatorv1alpha1.FrontProxy, *operatorv1alpha1.FrontProxyList]{
		client: ops.FrontProxies(namespace),
		obj:    newFrontProxy("edge", "root"),
		defaulted: func(t *testing.T, o *operatorv1alpha1.FrontProxy) {
			assert.Nil(t, o.Spec.Replicas, "replicas is not stored")
		},
		mutateSpec: func(o *operatorv1alpha1.FrontProxy) { o.Spec.ExtraArgs = append(o.Spec.ExtraArgs, "--v=2") },
		setStatus:  func(o *operatorv1alpha1.FrontProxy, p string) { o.Status.Phase = operatorv1alpha1.Phase(p) },
		phase:      func(o *operatorv1alpha1.FrontProxy) string { return string(o.Status.Phase) },
	}.run)

	t.Run("CacheServer", crudCase[*operatorv1alpha1.CacheServer, *operatorv1alpha1.CacheServerList]{
		client: ops.CacheServers(namespace),
		obj:    newCacheServer("cache"),
		defaulted: func(t *testing.T, o *operatorv1alpha1.CacheServer) {
			assert.Equal(t, "cluster.local", o.Spec.ClusterDomain)
		},
		mutateSpec: func(o *operatorv1alpha1.CacheServer) { o.Spec.ExtraArgs = append(o.Spec.ExtraArgs, "--v=2") },
		setStatus:  func(o *operatorv1alpha1.CacheServer, p string) { o.Status.Phase = operatorv1alpha1.Phase(p) },
		phase:      func(o *operatorv1alpha1.CacheServer) string { return string(o.Status.Phase) },
	}.run)

	t.Run("Kubeconfig", crudCase[*operatorv1alpha1.Kubeconfig, *operatorv1alpha1.KubeconfigList]{
		client:     ops.Kubeconfigs(namespace),
		obj:        newKubeconfig("alice", "edge"),
		defaulted:  func(t *testing.T, o *operatorv1alpha1.Kubeconfig) { assert.Equal(t, "root", o.Spec.TargetWorkspace) },
		mutateSpec: func(o *operatorv1alpha1.Kubeconfig) { o.Spec.Groups = append(o.Spec.Groups, "ops") },
		setStatus:  func(o *operatorv1alpha1.Kubeconfig, p string) { o.Status.Phase = operatorv1alpha1.KubeconfigPhase(p) },
		phase:      func(o *operatorv1alpha1.Kubeconfig) string { return string(o.Status.Phase) },
	}.run)

	t.Run("VirtualWorkspace", crudCase[*operatorv1alpha1.VirtualWorkspace, *operatorv1alpha1.VirtualWorkspaceList]{
		client: ops.VirtualWorkspaces(namespace),
		obj:    newVirtualWorkspace("vw", "root"),
		defaulted: func(t *testing.T, o *operatorv1alpha1.VirtualWorkspace) {
			assert.Equal(t, "cluster.local", o.Spec.ClusterDomain)
			assert.EqualValues(t, 6443, o.Spec.External.Port)
		},
		mutateSpec: func(o *operatorv1alpha1.VirtualWorkspace) { o.Spec.ExtraArgs = append(o.Spec.ExtraArgs, "--v=2") },
		setStatus:  func(o *operatorv1alpha1.VirtualWorkspace, p string) { o.Status.Phase = operatorv1alpha1.Phase(p) },
		phase:      func(o *operatorv1alpha1.VirtualWorkspace) string { return string(o.Status.Phase) },
	}.run)

	// A Link has no phase: its Ready condition's reason stands for one.
	t.Run("Link", crudCase[*operatorv1alpha1.Link, *operatorv1alpha1.LinkList]{
		client:     ops.Links(namespace),
		obj:        newLink("eu-1", "root", "eu-1.links.example.com"),
		defaulted:  func(t *testing.T, o *operatorv1alpha1.Link) { assert.Empty(t, o.Spec.DNSNames) },
		mutateSpec: func(o *operatorv1alpha1.Link) { o.Spec.DNSNames = append(o.Spec.DNSNames, "eu.kcp.example.com") },
		setStatus: func(o *operatorv1alpha1.Link, reason string) {
			o.Status.Conditions = []metav1.Condition{{Type: operatorv1alpha1.ConditionLinkReady, Status: metav1.ConditionFalse,
				Reason: reason, LastTransitionTime: metav1.Now()}}
		},
		phase: func(o *operatorv1alpha1.Link) string {
			if c := apimeta.FindStatusCondition(o.Status.Conditions, operatorv1alpha1.ConditionLinkReady); c != nil {
				return c.Reason
			}
			return ""
		},
	}.run)
}

// expectEvent reads the next event of a watch and checks its type and object.
func expectEvent(t *testing.T, w watch.Interface, typ watch.EventType, name string) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(t, ok, "watch closed before a %s event", typ)
		require.Equal(t, typ, ev.Type, "event %+v", ev.Object)
		m, err := apimeta.Accessor(ev.Object)
		require.NoError(t, err)
		assert.Equal(t, name, m.GetName())
	case <-t.Context().Done():
		t.Fatalf("no %s event for %s", typ, name)
	case <-timeout():
		t.Fatalf("no %s event for %s within %s", typ, name, eventTimeout)
	}
}

// names lists the names of the items of a list.
func names(t *testing.T, list runtime.Object) []string {
	t.Helper()
	items, err := apimeta.ExtractList(list)
	require.NoError(t, err)
	var out []string
	for _, item := range items {
		m, err := apimeta.Accessor(item)
		require.NoError(t, err)
		out = append(out, m.GetName())
	}
	return out
}
