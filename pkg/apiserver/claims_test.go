package apiserver

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store/storetest"
)

// testClaims are the claims of a server whose storage is objects, and the resource of each
// object's kind.
func testClaims(objects *[]runtime.Object) *store.Claims {
	c := &store.Claims{Derive: deriveNames(NewScheme())}
	for kind, newList := range map[string]func() runtime.Object{
		"RootShard":        func() runtime.Object { return &operator.RootShardList{} },
		"Shard":            func() runtime.Object { return &operator.ShardList{} },
		"FrontProxy":       func() runtime.Object { return &operator.FrontProxyList{} },
		"CacheServer":      func() runtime.Object { return &operator.CacheServerList{} },
		"VirtualWorkspace": func() runtime.Object { return &operator.VirtualWorkspaceList{} },
		"Kubeconfig":       func() runtime.Object { return &operator.KubeconfigList{} },
	} {
		own := &ownObjects{kind: kind, objects: objects, newList: newList}
		c.Kinds = append(c.Kinds, store.ClaimingKind{Kind: kind, Resource: resourceOf(kind), List: own})
	}
	return c
}

func kindOf(o runtime.Object) string {
	kinds, _, err := NewScheme().ObjectKinds(o)
	if err != nil {
		panic(err)
	}
	return kinds[0].Kind
}

func resourceOf(kind string) schema.GroupResource {
	return map[string]schema.GroupResource{
		"RootShard": operator.Resource("rootshards"), "Shard": operator.Resource("shards"), "FrontProxy": operator.Resource("frontproxies"),
		"CacheServer": operator.Resource("cacheservers"), "VirtualWorkspace": operator.Resource("virtualworkspaces"),
		"Kubeconfig": operator.Resource("kubeconfigs"),
	}[kind]
}

// ownObjects are the objects of kind among objects, read at each List, so that a test may
// change objects between checks.
type ownObjects struct {
	rest.TableConvertor
	kind    string
	objects *[]runtime.Object
	newList func() runtime.Object
}

func (o *ownObjects) NewList() runtime.Object { return o.newList() }

func (o *ownObjects) List(ctx context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	var own []runtime.Object
	for _, obj := range *o.objects {
		if kindOf(obj) == o.kind {
			own = append(own, obj)
		}
	}
	return storetest.Lister{NewListFunc: o.newList, Objects: own}.List(ctx, opts)
}

func meta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "team-a", Name: name} }
func ref(name string) *corev1.LocalObjectReference {
	return &corev1.LocalObjectReference{Name: name}
}

func rootShard(name string) *operator.RootShard { return &operator.RootShard{ObjectMeta: meta(name)} }
func shardOf(name, rs string) *operator.Shard {
	s := &operator.Shard{ObjectMeta: meta(name)}
	s.Spec.RootShard.Reference = ref(rs)
	return s
}
func joinedShard(name, secret string) *operator.Shard {
	s := &operator.Shard{ObjectMeta: meta(name)}
	s.Spec.RootShard.SecretRef = ref(secret)
	return s
}
func frontProxy(name, rs string) *operator.FrontProxy {
	fp := &operator.FrontProxy{ObjectMeta: meta(name)}
	fp.Spec.RootShard.Reference = ref(rs)
	return fp
}
func cacheServer(name string) *operator.CacheServer {
	return &operator.CacheServer{ObjectMeta: meta(name)}
}
func virtualWorkspace(name, rs string) *operator.VirtualWorkspace {
	vw := &operator.VirtualWorkspace{ObjectMeta: meta(name)}
	vw.Spec.Target.RootShardRef = ref(rs)
	return vw
}
func kubeconfigOf(name, secret, rs string) *operator.Kubeconfig {
	kc := &operator.Kubeconfig{ObjectMeta: meta(name)}
	kc.Spec.SecretRef.Name = secret
	kc.Spec.Target.RootShardRef = ref(rs)
	return kc
}

func TestClaimsRefuseAnObjectDerivingAnotherObjectsName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		first  []runtime.Object
		second runtime.Object
		// field is where the 422 points; want are in its message.
		field string
		want  []string
	}{
		{"Shard next to the RootShard of its name", []runtime.Object{rootShard("alpha")}, shardOf("alpha", "root"),
			"metadata.name", []string{"RootShard/alpha", `"alpha-`}},
		{"RootShard next to the Shard of its name", []runtime.Object{shardOf("alpha", "root")}, rootShard("alpha"),
			"metadata.name", []string{"Shard/alpha", `"alpha-`}},
		{"CacheServer next to the RootShard of its name", []runtime.Object{rootShard("alpha")}, cacheServer("alpha"),
			"metadata.name", []string{"RootShard/alpha", `"alpha-ca"`}},
		{"Kubeconfig ca next to RootShard kubeconfig", []runtime.Object{rootShard("kubeconfig")}, kubeconfigOf("ca", "ca-kubeconfig", "root"),
			"metadata.name", []string{"RootShard/kubeconfig", `"kubeconfig-ca"`}},
		{"RootShard kubeconfig next to Kubeconfig ca", []runtime.Object{kubeconfigOf("ca", "ca-kubeconfig", "root")}, rootShard("kubeconfig"),
			"metadata.name", []string{"Kubeconfig/ca", `"kubeconfig-ca"`}},
		{"RootShard x-etcd next to RootShard x", []runtime.Object{rootShard("x")}, rootShard("x-etcd"),
			"metadata.name", []string{"RootShard/x", `"x-etcd-client-ca"`}},
		{"RootShard x next to RootShard x-etcd", []runtime.Object{rootShard("x-etcd")}, rootShard("x"),
			"metadata.name", []string{"RootShard/x-etcd", `"x-etcd-client-ca"`}},
		{"joined Shard next to RootShard y-shard-root", []runtime.Object{rootShard("y-shard-root")}, joinedShard("y", "root-shard-join"),
			"spec.rootShard.secretRef", []string{"RootShard/y-shard-root", `"y-shard-root-`}},
		{"RootShard y-shard-root next to a joined Shard", []runtime.Object{joinedShard("y", "root-shard-join")}, rootShard("y-shard-root"),
			"metadata.name", []string{"Shard/y", `"y-shard-root-`}},
		{"Kubeconfig secretRef on a join Secret", []runtime.Object{rootShard("root")}, kubeconfigOf("admin", "root-shard-join", "root"),
			"spec.secretRef.name", []string{"RootShard/root", `"root-shard-join"`}},
		{"RootShard whose join Secret a Kubeconfig writes", []runtime.Object{kubeconfigOf("admin", "root-shard-join", "root")}, rootShard("root"),
			"metadata.name", []string{"Kubeconfig/admin", `"root-shard-join"`}},
		{"two Kubeconfigs into one Secret", []runtime.Object{kubeconfigOf("a", "shared", "root")}, kubeconfigOf("b", "shared", "root"),
			"spec.secretRef.name", []string{"Kubeconfig/a", `"shared"`}},
		{"FrontProxy edge next to RootShard root-edge", []runtime.Object{rootShard("root-edge")}, frontProxy("edge", "root"),
			"metadata.name", []string{"RootShard/root-edge", `"root-edge-`}},
	} {
		for _, indexed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, indexed %v", tc.name, indexed), func(t *testing.T) {
				objects := append([]runtime.Object{}, tc.first...)
				c := testClaims(&objects)
				if indexed {
					runIndex(t, c)
				}
				err := c.Check(t.Context(), resourceOf(kindOf(tc.second)), tc.second, nil)
				require.Error(t, err)
				require.True(t, apierrors.IsInvalid(err), "want a 422, got %v", err)
				causes := err.(apierrors.APIStatus).Status().Details.Causes
				require.Len(t, causes, 1, "%v", err)
				assert.Equal(t, tc.field, causes[0].Field)
				for _, w := range tc.want {
					assert.Contains(t, causes[0].Message, w)
				}
			})
		}
	}
}

// runIndex runs c's index of derived names until the test ends, and waits until the checks
// answer from it.
func runIndex(t *testing.T, c *store.Claims) {
	t.Helper()
	c.Run(t.Context())
	require.Eventually(t, c.Indexed, 5*time.Second, time.Millisecond, "the index lists every kind")
}

// TestClaimsIndexFollowsWrites: once the checks answer from the index, what this replica
// stores (Observe) counts at once, what it deletes (Forget) no longer does, a spec change
// that derives another name moves the name, and the object itself never clashes with its
// own names.
func TestClaimsIndexFollowsWrites(t *testing.T) {
	objects := []runtime.Object{}
	c := testClaims(&objects)
	runIndex(t, c)
	alpha := rootShard("alpha")
	alpha.UID, alpha.Generation = "uid-alpha", 1
	shard := shardOf("alpha", "root")
	require.NoError(t, c.Check(t.Context(), resourceOf("Shard"), shard, nil), "nothing stored yet")

	c.Observe("rootshards", alpha)
	err := c.Check(t.Context(), resourceOf("Shard"), shard, nil)
	require.True(t, apierrors.IsInvalid(err), "a RootShard just stored counts at once: %v", err)
	assert.Contains(t, err.Error(), "RootShard/alpha")
	require.NoError(t, c.Check(t.Context(), resourceOf("RootShard"), alpha, nil), "an object's own names are not a clash")

	c.Forget("rootshards", alpha)
	require.NoError(t, c.Check(t.Context(), resourceOf("Shard"), shard, nil), "a deleted RootShard no longer counts")

	// A Kubeconfig that moves its Secret: the old name is free, the new one taken.
	kc := kubeconfigOf("admin", "shared", "root")
	kc.UID, kc.Generation = "uid-kc", 1
	c.Observe("kubeconfigs", kc)
	other := kubeconfigOf("b", "shared", "root")
	require.Error(t, c.Check(t.Context(), resourceOf("Kubeconfig"), other, nil))
	moved := kc.DeepCopy()
	moved.Spec.SecretRef.Name, moved.Generation = "elsewhere", 2
	c.Observe("kubeconfigs", moved)
	require.NoError(t, c.Check(t.Context(), resourceOf("Kubeconfig"), other, nil), "the name it derived before is free")
	stale := kc.DeepCopy()
	c.Observe("kubeconfigs", stale)
	require.NoError(t, c.Check(t.Context(), resourceOf("Kubeconfig"), other, nil),
		"an older generation seen late (a watch event after this replica's own write) does not undo the newer")
}

func TestClaimsAllowNearNames(t *testing.T) {
	for _, tc := range []struct {
		name   string
		first  []runtime.Object
		second runtime.Object
	}{
		{"alpha and alphabet", []runtime.Object{rootShard("alpha")}, rootShard("alphabet")},
		{"alphabet and alpha", []runtime.Object{rootShard("alphabet")}, rootShard("alpha")},
		{"x and xetcd", []runtime.Object{rootShard("x")}, rootShard("xetcd")},
		{"Shard alpha next to CacheServer alphabet", []runtime.Object{cacheServer("alphabet")}, shardOf("alpha", "root")},
		{"a whole setup", []runtime.Object{rootShard("root"), shardOf("shard-1", "root"), frontProxy("edge", "root"),
			cacheServer("cache"), virtualWorkspace("vw", "root"), kubeconfigOf("admin", "admin-kubeconfig", "root")},
			kubeconfigOf("ci", "ci-kubeconfig", "root")},
		{"a second RootShard of its own namespace", []runtime.Object{rootShard("root"), frontProxy("edge", "root")}, rootShard("other")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objects := append([]runtime.Object{}, tc.first...)
			c := testClaims(&objects)
			assert.NoError(t, c.Check(t.Context(), resourceOf(kindOf(tc.second)), tc.second, nil))
		})
	}
}

func TestClaimsCountOnlyTheNamespace(t *testing.T) {
	other := rootShard("alpha")
	other.Namespace = "team-b"
	objects := []runtime.Object{other}
	assert.NoError(t, testClaims(&objects).Check(t.Context(), resourceOf("Shard"), shardOf("alpha", "root"), nil))
}

func TestClaimsOnUpdate(t *testing.T) {
	kc := kubeconfigOf("admin", "admin-kubeconfig", "root")
	objects := []runtime.Object{rootShard("root"), kc}
	c := testClaims(&objects)

	// The object itself is not another object.
	assert.NoError(t, c.Check(t.Context(), resourceOf("Kubeconfig"), kc.DeepCopy(), kc))

	moved := kc.DeepCopy()
	moved.Spec.SecretRef.Name = "root-shard-join"
	err := c.Check(t.Context(), resourceOf("Kubeconfig"), moved, kc)
	require.True(t, apierrors.IsInvalid(err), "want a 422, got %v", err)
	assert.Equal(t, "spec.secretRef.name", err.(apierrors.APIStatus).Status().Details.Causes[0].Field)
	assert.Contains(t, err.Error(), `RootShard/root`)

	// An object that derived a clashing name before the check existed may still be edited,
	// as long as the edit adds no name another object derives.
	squatter := kubeconfigOf("old", "root-shard-join", "root")
	objects = append(objects, squatter)
	c = testClaims(&objects)
	edited := squatter.DeepCopy()
	edited.Labels = map[string]string{"team": "a"}
	assert.NoError(t, c.Check(t.Context(), resourceOf("Kubeconfig"), edited, squatter))
}

// TestClaimsDeriveAStoredObjectOncePerVersion: the names of a stored object are derived
// again only when its resourceVersion changes, so a create in a namespace of many objects
// does not build every neighbour's certificates anew.
func TestClaimsDeriveAStoredObjectOncePerVersion(t *testing.T) {
	stored := rootShard("alpha")
	stored.UID, stored.ResourceVersion = "uid-1", "5"
	objects := []runtime.Object{stored}
	c := testClaims(&objects)
	derive, derived := c.Derive, 0
	c.Derive = func(o runtime.Object) ([]store.DerivedName, error) {
		if o.(metav1.Object).GetName() == "alpha" {
			derived++
		}
		return derive(o)
	}
	check := func() error { return c.Check(t.Context(), resourceOf("Shard"), shardOf("beta", "root"), nil) }
	require.NoError(t, check())
	require.NoError(t, check())
	assert.Equal(t, 1, derived, "derived once while its version is the same")

	stored.ResourceVersion = "6"
	require.NoError(t, check())
	assert.Equal(t, 2, derived, "derived again at a new version")

	// The RootShard gone and a Shard of its name stored instead, the Shard's names count.
	objects[0] = shardOf("alpha", "root")
	objects[0].(*operator.Shard).UID, objects[0].(*operator.Shard).ResourceVersion = "uid-2", "6"
	c.Kinds = testClaims(&objects).Kinds
	err := c.Check(t.Context(), resourceOf("RootShard"), rootShard("alpha"), nil)
	require.True(t, apierrors.IsInvalid(err), "want a 422, got %v", err)
	assert.Contains(t, err.Error(), "Shard/alpha")
}

// watchedObjects are ownObjects whose storage also watches: each Watch is w, which the test
// feeds.
type watchedObjects struct {
	*ownObjects
	w *watch.FakeWatcher
}

func (o watchedObjects) Watch(context.Context, *metainternalversion.ListOptions) (watch.Interface, error) {
	return o.w, nil
}

// cachingObject stands in for the watch cache's wrapper of an event's object, which it hands
// to every watcher of the event (runtime.CacheableObject).
type cachingObject struct{ runtime.Object }

func (c cachingObject) CacheEncode(runtime.Identifier, func(runtime.Object, io.Writer) error, io.Writer) error {
	return nil
}
func (c cachingObject) GetObject() runtime.Object { return c.Object.DeepCopyObject() }

// TestClaimsIndexFollowsWrappedWatchEvents: another replica's writes reach the index
// through the storage's watch, whose events the watch cache wraps; the index reads the
// object inside, for an addition and for a deletion.
func TestClaimsIndexFollowsWrappedWatchEvents(t *testing.T) {
	objects := []runtime.Object{}
	c := testClaims(&objects)
	w := watch.NewFakeWithChanSize(2, false)
	for i, k := range c.Kinds {
		if k.Kind == "RootShard" {
			c.Kinds[i].List = watchedObjects{ownObjects: k.List.(*ownObjects), w: w}
		}
	}
	runIndex(t, c)
	alpha := rootShard("alpha")
	alpha.UID, alpha.Generation = "uid-alpha", 1
	shard := shardOf("alpha", "root")

	w.Add(cachingObject{alpha})
	require.Eventually(t, func() bool {
		return apierrors.IsInvalid(c.Check(t.Context(), resourceOf("Shard"), shard, nil))
	}, 5*time.Second, time.Millisecond, "a RootShard another replica stored counts once its event comes")
	w.Delete(cachingObject{alpha})
	require.Eventually(t, func() bool {
		return c.Check(t.Context(), resourceOf("Shard"), shard, nil) == nil
	}, 5*time.Second, time.Millisecond, "and no longer once its deletion comes")
}

// TestClaimsIndexIgnoresAWatchEventFromBeforeADeletion: this replica deletes an object
// (Forget) before the watch brings the events of its last write and of its deletion; the
// late write's event does not index it again.
func TestClaimsIndexIgnoresAWatchEventFromBeforeADeletion(t *testing.T) {
	objects := []runtime.Object{}
	c := testClaims(&objects)
	w := watch.NewFakeWithChanSize(4, false)
	for i, k := range c.Kinds {
		if k.Kind == "RootShard" {
			c.Kinds[i].List = watchedObjects{ownObjects: k.List.(*ownObjects), w: w}
		}
	}
	runIndex(t, c)
	alpha := rootShard("alpha")
	alpha.UID, alpha.Generation = "uid-alpha", 1
	shard := shardOf("alpha", "root")
	c.Observe("rootshards", alpha)
	c.Forget("rootshards", alpha)

	w.Add(cachingObject{alpha})
	// A second object's event, after the late one, says when the late one was handled.
	beta := rootShard("beta")
	beta.UID, beta.Generation = "uid-beta", 1
	w.Add(beta)
	require.Eventually(t, func() bool {
		return apierrors.IsInvalid(c.Check(t.Context(), resourceOf("Shard"), shardOf("beta", "root"), nil))
	}, 5*time.Second, time.Millisecond)
	require.NoError(t, c.Check(t.Context(), resourceOf("Shard"), shard, nil), "the deleted RootShard's late event does not index it again")

	w.Delete(alpha)
	// A RootShard of the same name, created again (another UID), counts.
	again := rootShard("alpha")
	again.UID, again.Generation = "uid-alpha-2", 1
	w.Add(again)
	require.Eventually(t, func() bool {
		return apierrors.IsInvalid(c.Check(t.Context(), resourceOf("Shard"), shard, nil))
	}, 5*time.Second, time.Millisecond, "a new object of the name counts")
}
