package kinds

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	opfake "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions"
)

// TestKindsReachTheirObjects: what the shared code derives of each of our kinds from its type
// reaches that kind's objects: its finalizer, its informer and cache, its client, and the
// fields of its status.
func TestKindsReachTheirObjects(t *testing.T) {
	meta := metav1.ObjectMeta{Namespace: "team-a", Name: "x"}
	t.Run("RootShard", reaches(RootShard, &operatorv1alpha1.RootShard{ObjectMeta: meta}, "operator.kcp.io/rootshard-cleanup"))
	t.Run("Shard", reaches(Shard, &operatorv1alpha1.Shard{ObjectMeta: meta}, "operator.kcp.io/shard-cleanup"))
	t.Run("FrontProxy", reaches(FrontProxy, &operatorv1alpha1.FrontProxy{ObjectMeta: meta}, "operator.kcp.io/frontproxy-cleanup"))
	t.Run("CacheServer", reaches(CacheServer, &operatorv1alpha1.CacheServer{ObjectMeta: meta}, "operator.kcp.io/cacheserver-cleanup"))
	t.Run("Kubeconfig", reaches(Kubeconfig, &operatorv1alpha1.Kubeconfig{ObjectMeta: meta}, "operator.kcp.io/kubeconfig-cleanup"))
	t.Run("VirtualWorkspace", reaches(VirtualWorkspace, &operatorv1alpha1.VirtualWorkspace{ObjectMeta: meta},
		"operator.kcp.io/virtualworkspace-cleanup"))
}

func reaches[T controller.Object, S any](kind controller.Kind[T, S], obj T, finalizer string) func(*testing.T) {
	return func(t *testing.T) {
		assert.Equal(t, finalizer, kind.Finalizer())
		assert.Equal(t, kind.Name, All.KindOf(obj))

		ours := opfake.NewSimpleClientset(obj.DeepCopyObject())
		inf := controller.Informers{Ours: informers.NewSharedInformerFactory(ours, 0)}
		indexes, err := All.AddIndexes(inf)
		require.NoError(t, err)
		require.NoError(t, kind.Informer(inf.Ours.Operator().V1alpha1()).GetIndexer().Add(obj))
		cached, err := kind.Lister(indexes, "team-a").Get("x")
		require.NoError(t, err)
		assert.Same(t, obj, cached, "the kind's informer fills the kind's cache")
		_, err = kind.Lister(indexes, "team-b").Get("x")
		require.Error(t, err)

		stored, err := kind.Client(ours, "team-a").Get(t.Context(), "x", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, "x", stored.GetName())

		common := kind.Common(kind.Status(obj))
		*common.ObservedGeneration = 7
		*common.Conditions = []metav1.Condition{{Type: "Available"}}
		if common.Phase != nil {
			*common.Phase = operatorv1alpha1.PhaseRunning
		} else {
			require.NotNil(t, common.OwnPhase, "a kind without a setup's phase has one of its own")
			assert.Empty(t, common.OwnPhase())
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		require.NoError(t, err)
		status := u["status"].(map[string]any)
		assert.EqualValues(t, 7, status["observedGeneration"])
		assert.Len(t, status["conditions"], 1)
		if common.Phase != nil {
			assert.Equal(t, "Running", status["phase"])
		}
	}
}
