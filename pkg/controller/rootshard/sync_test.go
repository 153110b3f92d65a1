package rootshard

import (
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmfake "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/fake"
	cmlisters "github.com/cert-manager/cert-manager/pkg/client/listers/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	opfake "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/fake"
	listers "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// fixture is a Controller over fake clients and hand-filled caches: a unit test of sync
// alone, which counts the write requests it makes.
type fixture struct {
	c                   *Controller
	ours                *opfake.Clientset
	certManager         *cmfake.Clientset
	kube                *kubefake.Clientset
	rootShards, certs   cache.Indexer
	issuers, shardIndex cache.Indexer
}

func newFixture() *fixture {
	idx := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	f := &fixture{ours: opfake.NewSimpleClientset(), certManager: cmfake.NewSimpleClientset(), kube: kubefake.NewSimpleClientset(),
		rootShards: idx(), certs: idx(), issuers: idx(), shardIndex: idx()}
	f.c = &Controller{
		client: f.ours, rootShards: listers.NewRootShardLister(f.rootShards), shards: listers.NewShardLister(f.shardIndex),
		cacheServers: listers.NewCacheServerLister(idx()), kube: f.kube, certManager: f.certManager,
		certificates: cmlisters.NewCertificateLister(f.certs), issuers: cmlisters.NewIssuerLister(f.issuers),
		recorder: record.NewFakeRecorder(100),
	}
	return f
}

// realized fills the caches as the host cluster looks once a RootShard is fully realized:
// every desired object applied with its hash and every certificate issued, and the status
// written.
func (f *fixture) realized(t *testing.T, rs *operatorv1alpha1.RootShard) {
	desired := rootshard.BuildPKI(rs)
	for _, d := range desired.Issuers {
		hash, err := controller.DesiredHash(d)
		require.NoError(t, err)
		require.NoError(t, f.issuers.Add(&cmv1.Issuer{ObjectMeta: metav1.ObjectMeta{Name: *d.Name, Namespace: *d.Namespace,
			Annotations: map[string]string{controller.DesiredHashAnnotation: hash}}}))
	}
	for _, d := range desired.Certificates {
		hash, err := controller.DesiredHash(d)
		require.NoError(t, err)
		require.NoError(t, f.certs.Add(&cmv1.Certificate{
			ObjectMeta: metav1.ObjectMeta{Name: *d.Name, Namespace: *d.Namespace, Annotations: map[string]string{controller.DesiredHashAnnotation: hash}},
			Status:     cmv1.CertificateStatus{Conditions: []cmv1.CertificateCondition{{Type: cmv1.CertificateConditionReady, Status: "True"}}},
		}))
	}
	rs.Status = f.c.observe(rs, desired)
	require.NoError(t, f.rootShards.Update(rs))
}

func writes(actions ...[]clienttesting.Action) []string {
	var out []string
	for _, list := range actions {
		for _, a := range list {
			if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
				out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
			}
		}
	}
	return out
}

func rootShardWithFinalizer() *operatorv1alpha1.RootShard {
	rs := minimalRootShardForTest()
	rs.Finalizers = []string{Finalizer}
	return rs
}

func minimalRootShardForTest() *operatorv1alpha1.RootShard {
	return &operatorv1alpha1.RootShard{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a", Generation: 1},
		Spec: operatorv1alpha1.RootShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{ClusterDomain: "cluster.local",
				Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}},
			External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 6443},
		},
	}
}

func TestResyncOfARealizedRootShardWritesNothing(t *testing.T) {
	f := newFixture()
	rs := rootShardWithFinalizer()
	require.NoError(t, f.rootShards.Add(rs))
	f.realized(t, rs)

	require.NoError(t, f.c.sync(t.Context(), "team-a/root"))
	assert.Empty(t, writes(f.ours.Actions(), f.certManager.Actions(), f.kube.Actions()))
}

func TestSyncWritesWhatIsMissingOrChanged(t *testing.T) {
	t.Run("a new RootShard gets its finalizer first", func(t *testing.T) {
		f := newFixture()
		rs := minimalRootShardForTest()
		require.NoError(t, f.rootShards.Add(rs))
		_, err := f.ours.OperatorV1alpha1().RootShards("team-a").Create(t.Context(), rs, metav1.CreateOptions{})
		require.NoError(t, err)
		f.ours.ClearActions()

		require.NoError(t, f.c.sync(t.Context(), "team-a/root"))
		assert.Equal(t, []string{"update rootshards"}, writes(f.ours.Actions(), f.certManager.Actions()))
	})

	t.Run("a changed spec re-applies only what changed", func(t *testing.T) {
		f := newFixture()
		rs := rootShardWithFinalizer()
		require.NoError(t, f.rootShards.Add(rs))
		f.realized(t, rs)

		changed := rs.DeepCopy()
		changed.Spec.External.Hostname = "other.example.com"
		changed.Generation = 2
		require.NoError(t, f.rootShards.Update(changed))
		// The fake cert-manager client cannot apply; what matters is which objects the
		// controller tries to write.
		_ = f.c.sync(t.Context(), "team-a/root")
		assert.Equal(t, []string{"patch certificates"}, writes(f.certManager.Actions()), "only root-server has the hostname")
	})
}
