package hostcluster

import (
	"context"
	"errors"
	"testing"

	cmfake "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/fake"
	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// certManagerList is what discovery answers for cert-manager.io/v1 with resources.
func certManagerList(resources ...string) *metav1.APIResourceList {
	l := &metav1.APIResourceList{GroupVersion: CertManagerGroupVersion}
	for _, r := range resources {
		l.APIResources = append(l.APIResources, metav1.APIResource{Name: r})
	}
	return l
}

func TestCertManagerServed(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{}, "")
	for _, tc := range []struct {
		name      string
		resources *metav1.APIResourceList
		err       error
		served    bool
		wantErr   bool
	}{
		{name: "certificates and issuers are served", resources: certManagerList("certificates", "certificates/status", "issuers"), served: true},
		{name: "the group version is not found", err: notFound},
		{name: "issuers are missing", resources: certManagerList("certificates")},
		{name: "certificates are missing", resources: certManagerList("issuers", "clusterissuers")},
		{name: "an empty answer", resources: certManagerList()},
		{name: "no answer", resources: nil},
		{name: "the host cannot tell", err: errors.New("connection refused"), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			served, err := CertManagerServed(tc.resources, tc.err)
			if tc.wantErr {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.served, served)
		})
	}
}

// TestCertManagerAPI follows cert-manager through discovery: absent, unknown for a moment,
// installed, and removed again. The informers start once it is served, and the objects are
// enqueued again on each change, and only then.
func TestCertManagerAPI(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	factory := cminformers.NewSharedInformerFactory(cmfake.NewSimpleClientset(), 0)
	certificates := factory.Certmanager().V1().Certificates().Informer()
	api := NewCertManagerAPI(disc, factory)
	changes := 0
	api.OnChange(func() { changes++ })

	type want struct {
		known, ready, started bool
		changes               int
	}
	for _, step := range []struct {
		name      string
		resources []*metav1.APIResourceList
		fail      bool
		want      want
	}{
		{name: "the host cannot tell yet", fail: true, want: want{}},
		{name: "cert-manager is not installed", want: want{known: true}},
		{name: "still not installed", want: want{known: true}},
		{name: "only some resources are served", resources: []*metav1.APIResourceList{certManagerList("issuers")}, want: want{known: true}},
		{name: "installed", resources: []*metav1.APIResourceList{certManagerList("certificates", "issuers")},
			want: want{known: true, ready: true, started: true, changes: 1}},
		{name: "still installed", resources: []*metav1.APIResourceList{certManagerList("certificates", "issuers")},
			want: want{known: true, ready: true, started: true, changes: 1}},
		{name: "a blip of the host changes nothing", fail: true, want: want{known: true, ready: true, started: true, changes: 1}},
		{name: "removed", want: want{known: true, started: true, changes: 2}},
	} {
		t.Run(step.name, func(t *testing.T) {
			disc.Resources = step.resources
			disc.ReactionChain = nil
			if step.fail {
				disc.PrependReactor("*", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("connection refused")
				})
			}
			api.Check(ctx)
			assert.Equal(t, step.want.known, api.Known(), "known")
			assert.Equal(t, step.want.ready, api.Ready(), "ready")
			assert.Equal(t, step.want.started, certificates.HasSynced(), "informers started")
			assert.Equal(t, step.want.changes, changes, "changes")
		})
	}
}
