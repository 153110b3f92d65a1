package manager

import (
	"testing"

	cmfake "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/fake"
	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	opfake "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions"
)

// TestAtRelease: a member is planned with upgrade.Tag's tag once the roll is through: at the
// setup's release unless it pins a tag; its repository stays.
func TestAtRelease(t *testing.T) {
	for _, tc := range []struct {
		name    string
		image   *operatorv1alpha1.ImageSpec
		release string
		want    *operatorv1alpha1.ImageSpec
	}{
		{"no image", nil, "v0.32.2", &operatorv1alpha1.ImageSpec{Tag: "v0.32.2"}},
		{"a repository alone", &operatorv1alpha1.ImageSpec{Repository: "r"}, "v0.32.2", &operatorv1alpha1.ImageSpec{Repository: "r", Tag: "v0.32.2"}},
		{"pinned", &operatorv1alpha1.ImageSpec{Tag: "v0.31.6"}, "v0.32.2", &operatorv1alpha1.ImageSpec{Tag: "v0.31.6"}},
		{"no release change", nil, "", nil},
	} {
		spec := operatorv1alpha1.ComponentSpec{Image: tc.image}
		rs := &operatorv1alpha1.RootShard{Spec: operatorv1alpha1.RootShardSpec{Version: tc.release}}
		atRelease(&spec, afterRoll(rs, tc.release))
		assert.Equal(t, tc.want, spec.Image, tc.name)
	}
	assert.Equal(t, "CacheServer → RootShard → Shard → VirtualWorkspace → FrontProxy", groups())
}

// TestWithReleaseCopies: the stored object a member is planned from is not changed.
func TestWithReleaseCopies(t *testing.T) {
	s := &operatorv1alpha1.Shard{}
	rs := &operatorv1alpha1.RootShard{Spec: operatorv1alpha1.RootShardSpec{Version: "v0.32.2"}}
	c := withRelease(s, func(o *operatorv1alpha1.Shard) { atRelease(&o.Spec.ComponentSpec, afterRoll(rs, "v0.32.2")) })
	assert.Nil(t, s.Spec.Image)
	assert.Equal(t, "v0.32.2", c.Spec.Image.Tag)
}

// TestThePreviewerFindsTheControllers: the controllers the manager sets up are the
// controllers themselves, so that the preview finds one that plans for each setup kind.
func TestThePreviewerFindsTheControllers(t *testing.T) {
	kube, certManager, ours := kubefake.NewClientset(), cmfake.NewClientset(), opfake.NewClientset()
	f := factories{ours: informers.NewSharedInformerFactory(ours, 0), host: cminformers.NewSharedInformerFactory(certManager, 0),
		kube: kubeinformers.NewSharedInformerFactory(kube, 0), references: kubeinformers.NewSharedInformerFactory(kube, 0)}
	host := hostcluster.NewHost(kube, certManager, f.host.Certmanager().V1().Certificates().Lister(), f.host.Certmanager().V1().Issuers().Lister(),
		f.kube.Core().V1().Secrets().Lister(), f.kube.Core().V1().Services().Lister(), f.kube.Apps().V1().Deployments().Lister(),
		f.kube.Core().V1().ConfigMaps().Lister()).
		WithDisruptionBudgets(f.kube.Policy().V1().PodDisruptionBudgets().Lister()).
		WithStatefulSets(f.kube.Apps().V1().StatefulSets().Lister())
	runs, err := setUp(controller.Deps{Ours: ours, Informers: f.informers(), Host: host, Recorder: record.NewFakeRecorder(10)})
	require.NoError(t, err)
	p := newPreviewer(host, runs)
	require.NotNil(t, p)
	assert.NotNil(t, p.indexes)
}
