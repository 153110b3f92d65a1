package hostcluster_test

import (
	"context"
	"errors"
	"sort"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// TestRemoveKcpOperatorLeftovers: once an adopting RootShard is realized, what kcp-operator
// made for it and nothing took over goes, each deletion held to the UID read: its
// Deployments, Services, ConfigMaps, Secrets, self-signed Issuers and leaf Certificates with
// the Secret cert-manager issued them into. Its CAs and their Issuers stay, as does what
// kcp-operator made for another object, a leaf's Secret that is ours or another
// Certificate's, and what carries our labels. An Event lists what went, and the next call
// lists nothing.
func TestRemoveKcpOperatorLeftovers(t *testing.T) {
	const ns = "team-a"
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: ns, UID: "uid-root"}}
	theirs := kcpOperatorLabels("root")
	proxy := kcpOperatorLabels("root")
	proxy[pki.LabelComponent] = "rootshard-proxy"
	other := kcpOperatorLabels("other")
	shard := kcpOperatorLabels("root")
	shard[pki.LabelComponent] = "shard"
	ours := pki.Labels("rootshard", "root", "kcp")
	meta := func(name string, labels map[string]string, annotations ...string) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, UID: types.UID("uid-" + name)}
		if len(annotations) > 0 {
			m.Annotations = map[string]string{"cert-manager.io/certificate-name": annotations[0]}
		}
		return m
	}
	h := controllertest.NewHost(t)
	for _, o := range []runtime.Object{
		&appsv1.Deployment{ObjectMeta: meta("root-kcp", theirs)},
		&appsv1.Deployment{ObjectMeta: meta("root-proxy", proxy)},
		&appsv1.Deployment{ObjectMeta: meta("other-kcp", other)},
		&appsv1.Deployment{ObjectMeta: meta("root-shard-kcp", shard)},
		&appsv1.Deployment{ObjectMeta: meta("root-ours", ours)},
		&corev1.Service{ObjectMeta: meta("root-kcp", theirs)},
		&corev1.ConfigMap{ObjectMeta: meta("root-proxy-config", proxy)},
		&corev1.Secret{ObjectMeta: meta("root-client", nil, "root-client")},
		&corev1.Secret{ObjectMeta: meta("root-server", ours, "root-server")},
		&corev1.Secret{ObjectMeta: meta("root-vw", nil, "someone-elses")},
		&corev1.Secret{ObjectMeta: meta("root-logical-cluster-admin-kubeconfig", theirs)},
		// A CA taken over: cert-manager wrote our labels on its Secret.
		&corev1.Secret{ObjectMeta: meta("root-ca", ours, "root-ca")},
	} {
		require.NoError(t, h.Kube.Tracker().Add(o))
	}
	for _, o := range []runtime.Object{
		&cmv1.Certificate{ObjectMeta: meta("root-client", theirs), Spec: cmv1.CertificateSpec{SecretName: "root-client"}},
		&cmv1.Certificate{ObjectMeta: meta("root-server", theirs), Spec: cmv1.CertificateSpec{SecretName: "root-server"}},
		&cmv1.Certificate{ObjectMeta: meta("root-virtual-workspaces", theirs), Spec: cmv1.CertificateSpec{SecretName: "root-vw"}},
		&cmv1.Certificate{ObjectMeta: meta("root-gone", theirs), Spec: cmv1.CertificateSpec{SecretName: "root-gone"}},
		&cmv1.Certificate{ObjectMeta: meta("root-ca", theirs), Spec: cmv1.CertificateSpec{SecretName: "root-ca", IsCA: true}},
		&cmv1.Issuer{ObjectMeta: meta("root-ca", theirs), Spec: cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{CA: &cmv1.CAIssuer{SecretName: "root-ca"}}}},
		&cmv1.Issuer{ObjectMeta: meta("root-selfsigned", theirs), Spec: cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{SelfSigned: &cmv1.SelfSignedIssuer{}}}},
		&cmv1.Issuer{ObjectMeta: meta("other-selfsigned", other), Spec: cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{SelfSigned: &cmv1.SelfSignedIssuer{}}}},
	} {
		require.NoError(t, h.CM.Tracker().Add(o))
	}
	recorder := record.NewFakeRecorder(10)

	require.NoError(t, h.RemoveKcpOperatorLeftovers(t.Context(), ns, "rootshard", "root", recorder, rs))

	var deleted []string
	for _, a := range append(h.Kube.Actions(), h.CM.Actions()...) {
		d, ok := a.(k8stesting.DeleteActionImpl)
		if !ok {
			continue
		}
		deleted = append(deleted, d.GetResource().Resource+"/"+d.GetName())
		require.NotNil(t, d.DeleteOptions.Preconditions, "%s/%s is deleted with a precondition", d.GetResource().Resource, d.GetName())
		assert.Equal(t, types.UID("uid-"+d.GetName()), *d.DeleteOptions.Preconditions.UID, "%s/%s is deleted as read", d.GetResource().Resource, d.GetName())
	}
	sort.Strings(deleted)
	assert.Equal(t, []string{
		"certificates/root-client", "certificates/root-gone", "certificates/root-server", "certificates/root-virtual-workspaces",
		"configmaps/root-proxy-config", "deployments/root-kcp", "deployments/root-proxy",
		"issuers/root-selfsigned",
		"secrets/root-client", "secrets/root-logical-cluster-admin-kubeconfig",
		"services/root-kcp",
	}, deleted)
	require.Len(t, recorder.Events, 1)
	event := <-recorder.Events
	assert.Contains(t, event, "Normal KcpOperatorLeftoversRemoved")
	for _, d := range []string{"Deployment root-kcp", "Secret root-client", "Certificate root-gone", "Issuer root-selfsigned"} {
		assert.Contains(t, event, d)
	}

	// Found gone once: the next reconcile lists nothing.
	h.Kube.ClearActions()
	h.CM.ClearActions()
	require.NoError(t, h.RemoveKcpOperatorLeftovers(t.Context(), ns, "rootshard", "root", recorder, rs))
	assert.Empty(t, h.Kube.Actions())
	assert.Empty(t, h.CM.Actions())
	assert.Empty(t, recorder.Events)
}

// TestRemoveKcpOperatorLeftoversStopsAtAFailure: a deletion that fails for another reason
// than NotFound or a changed UID fails the removal, which is tried again on the next
// reconcile; a kind kcp-operator makes nothing for lists nothing.
func TestRemoveKcpOperatorLeftoversStopsAtAFailure(t *testing.T) {
	const ns = "team-a"
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: ns, UID: "uid-root"}}
	h := controllertest.NewHost(t)
	require.NoError(t, h.Kube.Tracker().Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "root-kcp", Namespace: ns,
		Labels: kcpOperatorLabels("root"), UID: "uid-svc"}}))
	h.Kube.PrependReactor("delete", "services", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("the host cluster is down")
	})
	recorder := record.NewFakeRecorder(10)
	err := h.RemoveKcpOperatorLeftovers(context.Background(), ns, "rootshard", "root", recorder, rs)
	require.ErrorContains(t, err, "deleting kcp-operator's Service team-a/root-kcp: the host cluster is down")
	h.Kube.ClearActions()
	err = h.RemoveKcpOperatorLeftovers(context.Background(), ns, "rootshard", "root", recorder, rs)
	require.Error(t, err, "tried again")
	assert.NotEmpty(t, h.Kube.Actions())

	h.Kube.ClearActions()
	require.NoError(t, h.RemoveKcpOperatorLeftovers(context.Background(), ns, "kubeconfig", "root", recorder, rs))
	assert.Empty(t, h.Kube.Actions())
}
