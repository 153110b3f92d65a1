package rootshard

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	cmfake "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/fake"
	cmlisters "github.com/cert-manager/cert-manager/pkg/client/listers/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	opfake "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/fake"
	listers "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
)

// fixture is a Controller over fake clients and hand-fed caches: a unit test of sync alone.
// Its appliers store what they apply in the caches, as the host cluster and the informers
// would, and count it.
type fixture struct {
	c       *Controller
	ours    *opfake.Clientset
	kube    *kubefake.Clientset
	cm      *cmfake.Clientset
	caches  map[string]cache.Indexer
	applied []string
}

func newFixture(t *testing.T, rs *operatorv1alpha1.RootShard) *fixture {
	idx := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	f := &fixture{ours: opfake.NewSimpleClientset(rs.DeepCopy()), kube: kubefake.NewSimpleClientset(), cm: cmfake.NewSimpleClientset(), caches: map[string]cache.Indexer{}}
	for _, k := range []string{"rootshards", "shards", "cacheservers", "certificates", "issuers", "secrets", "services", "deployments"} {
		f.caches[k] = idx()
	}
	require.NoError(t, f.caches["rootshards"].Add(rs.DeepCopy()))
	host := controller.NewHost(f.kube, f.cm,
		cmlisters.NewCertificateLister(f.caches["certificates"]), cmlisters.NewIssuerLister(f.caches["issuers"]),
		corev1listers.NewSecretLister(f.caches["secrets"]), corev1listers.NewServiceLister(f.caches["services"]),
		appsv1listers.NewDeploymentLister(f.caches["deployments"]))
	host.IssuerApplier.Apply = func(_ context.Context, o *cmapply.IssuerApplyConfiguration) error {
		return f.store(t, "issuers", "Issuer "+*o.Name, o, &cmv1.Issuer{})
	}
	host.CertificateApplier.Apply = func(_ context.Context, o *cmapply.CertificateApplyConfiguration) error {
		return f.store(t, "certificates", "Certificate "+*o.Name, o, &cmv1.Certificate{})
	}
	host.SecretApplier.Apply = func(_ context.Context, o *corev1ac.SecretApplyConfiguration) error {
		return f.store(t, "secrets", "Secret "+*o.Name, o, &corev1.Secret{})
	}
	host.ServiceApplier.Apply = func(_ context.Context, o *corev1ac.ServiceApplyConfiguration) error {
		return f.store(t, "services", "Service "+*o.Name, o, &corev1.Service{})
	}
	host.DeploymentApplier.Apply = func(_ context.Context, o *appsv1ac.DeploymentApplyConfiguration) error {
		return f.store(t, "deployments", "Deployment "+*o.Name, o, &appsv1.Deployment{})
	}
	f.c = &Controller{
		client: f.ours, rootShards: listers.NewRootShardLister(f.caches["rootshards"]), shards: listers.NewShardLister(f.caches["shards"]),
		cacheServers: listers.NewCacheServerLister(f.caches["cacheservers"]), host: host, recorder: record.NewFakeRecorder(1000),
	}
	return f
}

// store turns an apply configuration into the object the host would hold, into a cache.
func (f *fixture) store(t *testing.T, cacheName, what string, ac any, obj metav1.Object) error {
	data, err := json.Marshal(ac)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, obj))
	f.applied = append(f.applied, what)
	return f.caches[cacheName].Update(obj)
}

// hostCatchesUp plays cert-manager, the Deployment controller and the informers: every
// Certificate is issued into its Secret, the Deployment is rolled out, and the RootShard's
// cache holds what the controller wrote to it.
func (f *fixture) hostCatchesUp(t *testing.T) {
	for _, o := range f.caches["certificates"].List() {
		cert := o.(*cmv1.Certificate).DeepCopy()
		cert.Status.Conditions = []cmv1.CertificateCondition{{Type: cmv1.CertificateConditionReady, Status: "True"}}
		require.NoError(t, f.caches["certificates"].Update(cert))
		if _, exists, _ := f.caches["secrets"].Get(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cert.Namespace, Name: cert.Name}}); !exists {
			require.NoError(t, f.caches["secrets"].Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cert.Namespace, Name: cert.Name, ResourceVersion: "1"},
				Data: map[string][]byte{"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte(cert.Name)})}}))
		}
	}
	for _, o := range f.caches["deployments"].List() {
		d := o.(*appsv1.Deployment).DeepCopy()
		n := *d.Spec.Replicas
		d.Status = appsv1.DeploymentStatus{Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
		require.NoError(t, f.caches["deployments"].Update(d))
	}
	rs, err := f.ours.OperatorV1alpha1().RootShards("team-a").Get(t.Context(), "root", metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, f.caches["rootshards"].Update(rs))
}

// writes are the write requests made through the fake clients and the appliers.
func (f *fixture) writes() []string {
	out := append([]string{}, f.applied...)
	for _, list := range [][]clienttesting.Action{f.ours.Actions(), f.kube.Actions(), f.cm.Actions()} {
		for _, a := range list {
			if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" {
				out = append(out, v+" "+a.GetResource().Resource+"/"+a.GetSubresource())
			}
		}
	}
	return out
}

func (f *fixture) reset() {
	f.applied = nil
	f.ours.ClearActions()
	f.kube.ClearActions()
	f.cm.ClearActions()
}

// converge syncs until the RootShard is Running, as the host catches up in between.
func (f *fixture) converge(t *testing.T) {
	for range 5 {
		require.NoError(t, f.c.sync(t.Context(), "team-a/root"))
		f.hostCatchesUp(t)
	}
	rs, err := f.c.rootShards.RootShards("team-a").Get("root")
	require.NoError(t, err)
	require.Equal(t, operatorv1alpha1.PhaseRunning, rs.Status.Phase, "conditions: %+v", rs.Status.Conditions)
	f.reset()
}

func testRootShard() *operatorv1alpha1.RootShard {
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
	f := newFixture(t, testRootShard())
	f.converge(t)

	require.NoError(t, f.c.sync(t.Context(), "team-a/root"))
	assert.Empty(t, f.writes(), "a resync of an unchanged, realized RootShard must not write")
}

func TestFirstSyncAddsTheFinalizerOnly(t *testing.T) {
	f := newFixture(t, testRootShard())
	require.NoError(t, f.c.sync(t.Context(), "team-a/root"))
	assert.Equal(t, []string{"update rootshards/"}, f.writes())
}

func TestChangedSpecReappliesOnlyWhatChanged(t *testing.T) {
	f := newFixture(t, testRootShard())
	f.converge(t)

	rs, err := f.c.rootShards.RootShards("team-a").Get("root")
	require.NoError(t, err)
	rs = rs.DeepCopy()
	rs.Spec.External.Hostname = "other.example.com"
	rs.Generation = 2
	require.NoError(t, f.caches["rootshards"].Update(rs))

	require.NoError(t, f.c.sync(t.Context(), "team-a/root"))
	assert.ElementsMatch(t, []string{
		"Certificate root-server",                               // its DNS names
		"Secret root-external-logical-cluster-admin-kubeconfig", // its server URL
		"Deployment root-kcp",                                   // --shard-external-url
		"update rootshards/status",                              // observedGeneration
	}, f.writes())
}

// ExternalLogicalClusterAdminKubeconfig is the suffix of that kubeconfig Secret's name.
func ExternalLogicalClusterAdminKubeconfig() string {
	return "external-logical-cluster-admin-kubeconfig"
}

func TestMountedSecretChangeRollsTheDeployment(t *testing.T) {
	f := newFixture(t, testRootShard())
	f.converge(t)

	// cert-manager renews the server certificate: its Secret gets a new resource version.
	obj, exists, err := f.caches["secrets"].GetByKey("team-a/root-server")
	require.NoError(t, err)
	require.True(t, exists)
	renewed := obj.(*corev1.Secret).DeepCopy()
	renewed.ResourceVersion = "2"
	require.NoError(t, f.caches["secrets"].Update(renewed))

	require.NoError(t, f.c.sync(t.Context(), "team-a/root"))
	// The new pod template rolls the pods, so the RootShard is not Available meanwhile.
	assert.Equal(t, []string{"Deployment root-kcp", "update rootshards/status"}, f.writes())
}
