package controller

import (
	"context"
	"errors"
	"testing"

	cmfake "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/fake"
	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
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

func TestSetCertManagerNotInstalled(t *testing.T) {
	for _, tc := range []struct {
		name          string
		conditions    []metav1.Condition
		wantAvailable metav1.Condition
	}{
		{
			name:          "a new object waits",
			wantAvailable: metav1.Condition{Status: metav1.ConditionFalse, Reason: operatorv1alpha1.ReasonCertManagerNotInstalled},
		},
		{
			name: "what runs keeps its Available condition",
			conditions: []metav1.Condition{
				{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: operatorv1alpha1.ReasonReplicasAvailable},
				{Type: operatorv1alpha1.ConditionCertificatesReady, Status: metav1.ConditionTrue, Reason: operatorv1alpha1.ReasonCertificatesIssued},
			},
			wantAvailable: metav1.Condition{Status: metav1.ConditionTrue, Reason: operatorv1alpha1.ReasonReplicasAvailable},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conditions := append([]metav1.Condition{}, tc.conditions...)
			SetCertManagerNotInstalled(&conditions, 3)
			certs := meta.FindStatusCondition(conditions, operatorv1alpha1.ConditionCertificatesReady)
			require.NotNil(t, certs)
			assert.Equal(t, metav1.ConditionFalse, certs.Status)
			assert.Equal(t, operatorv1alpha1.ReasonCertManagerNotInstalled, certs.Reason)
			assert.Equal(t, "cert-manager.io/v1 is not served by the host cluster; install cert-manager", certs.Message)
			assert.Equal(t, int64(3), certs.ObservedGeneration)
			available := meta.FindStatusCondition(conditions, operatorv1alpha1.ConditionAvailable)
			require.NotNil(t, available)
			assert.Equal(t, tc.wantAvailable.Status, available.Status)
			assert.Equal(t, tc.wantAvailable.Reason, available.Reason)
			assert.Equal(t, operatorv1alpha1.PhaseProvisioning, Phase(conditions))
		})
	}
}

func TestSetCertificatesReadyCountsAndNamesThePending(t *testing.T) {
	var conditions []metav1.Condition
	SetCertificatesReady(&conditions, 1, 12, []string{"g", "b", "a", "f", "c", "e", "d"})
	c := meta.FindStatusCondition(conditions, operatorv1alpha1.ConditionCertificatesReady)
	require.NotNil(t, c)
	assert.Equal(t, operatorv1alpha1.ReasonCertificatesPending, c.Reason)
	assert.Equal(t, "7 of 12 certificates are not Ready, waiting for cert-manager to issue them: a, b, c, d, e and 2 more", c.Message)
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

// TestRequiringCertManager: while cert-manager is missing, reconcile does not run, the
// status says why, and an Event says it once.
func TestRequiringCertManager(t *testing.T) {
	recorder := record.NewFakeRecorder(10)
	missing := NewCertManagerAPI(&fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}, nil)
	l := Lifecycle[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus]{
		Kind: Kind[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus]{
			Status: func(rs *operatorv1alpha1.RootShard) *operatorv1alpha1.RootShardStatus { return &rs.Status },
			Common: func(s *operatorv1alpha1.RootShardStatus) Common {
				return Common{Phase: &s.Phase, ObservedGeneration: &s.ObservedGeneration, Conditions: &s.Conditions}
			},
		},
		Host: &Host{CertManagerAPI: missing}, Recorder: recorder,
	}
	reconciled := 0
	reconcile := l.RequiringCertManager(func(context.Context, *operatorv1alpha1.RootShard, *operatorv1alpha1.RootShardStatus) error {
		reconciled++
		return nil
	})
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "root", Generation: 1}}

	for i := range 2 {
		status := rs.Status.DeepCopy()
		require.NoError(t, reconcile(context.Background(), rs, status))
		l.markSynced(rs, status)
		assert.Equal(t, 0, reconciled)
		assert.Equal(t, operatorv1alpha1.PhaseProvisioning, status.Phase)
		assert.True(t, meta.IsStatusConditionPresentAndEqual(status.Conditions, operatorv1alpha1.ConditionCertificatesReady, metav1.ConditionFalse))
		synced := meta.FindStatusCondition(status.Conditions, operatorv1alpha1.ConditionSynced)
		require.NotNil(t, synced, "nothing was written to the host: Synced must say so")
		assert.Equal(t, metav1.ConditionFalse, synced.Status)
		assert.Equal(t, operatorv1alpha1.ReasonCertManagerNotInstalled, synced.Reason)
		if i == 0 {
			require.Len(t, recorder.Events, 1)
			assert.Equal(t, "Warning CertManagerNotInstalled cert-manager.io/v1 is not served by the host cluster; install cert-manager", <-recorder.Events)
		} else {
			assert.Empty(t, recorder.Events, "no Event while the status says it already")
		}
		rs.Status = *status
	}

	// Installed: reconcile runs.
	missing.ready.Store(true)
	status := rs.Status.DeepCopy()
	require.NoError(t, reconcile(context.Background(), rs, status))
	l.markSynced(rs, status)
	assert.Equal(t, 1, reconciled)
	assert.True(t, meta.IsStatusConditionPresentAndEqual(status.Conditions, operatorv1alpha1.ConditionSynced, metav1.ConditionTrue))
}
