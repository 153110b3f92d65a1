package hostcluster

import (
	"testing"

	cmfake "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/fake"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestKcpOperatorTakeover: NewHost alone takes nothing over; WithKcpOperatorTakeover replaces
// kcp-operator's Deployment (deleted as read, by UID) and gives its Service our selector and
// ports, held to the UID read.
func TestKcpOperatorTakeover(t *testing.T) {
	kube := kubefake.NewSimpleClientset(
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "root-kcp", Namespace: "team-a", UID: "uid-deploy"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "root-kcp", Namespace: "team-a", UID: "uid-svc"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "theirs"}, Ports: []corev1.ServicePort{{Name: "https", Port: 6443}}}},
	)
	h := NewHost(kube, cmfake.NewSimpleClientset(), nil, nil, nil, nil, nil, nil)
	assert.Nil(t, h.DeploymentApplier.Adopt)
	assert.Nil(t, h.ServiceApplier.Adopt)
	h.WithKcpOperatorTakeover()
	require.NotNil(t, h.DeploymentApplier.Adopt)
	require.NotNil(t, h.ServiceApplier.Adopt)

	deployment, err := kube.AppsV1().Deployments("team-a").Get(t.Context(), "root-kcp", metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, h.DeploymentApplier.Adopt(t.Context(), deployment, appsv1ac.Deployment("root-kcp", "team-a")))
	var deleted k8stesting.DeleteActionImpl
	for _, a := range kube.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok {
			deleted = d
		}
	}
	require.NotNil(t, deleted.DeleteOptions.Preconditions)
	assert.Equal(t, "root-kcp", deleted.Name)
	assert.Equal(t, deployment.UID, *deleted.DeleteOptions.Preconditions.UID)
	// Gone already: nothing to do.
	require.NoError(t, h.DeploymentApplier.Adopt(t.Context(), deployment, appsv1ac.Deployment("root-kcp", "team-a")))

	service, err := kube.CoreV1().Services("team-a").Get(t.Context(), "root-kcp", metav1.GetOptions{})
	require.NoError(t, err)
	desired := corev1ac.Service("root-kcp", "team-a").WithSpec(corev1ac.ServiceSpec().
		WithSelector(map[string]string{"app.kubernetes.io/component": "kcp"}).
		WithPorts(corev1ac.ServicePort().WithName("https").WithPort(6443)))
	require.NoError(t, h.ServiceApplier.Adopt(t.Context(), service, desired))
	service, err = kube.CoreV1().Services("team-a").Get(t.Context(), "root-kcp", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"app.kubernetes.io/component": "kcp"}, service.Spec.Selector, "kcp-operator's selector keys are gone")
	// Another Service of the name since: the UID test refuses the patch.
	stranger := service.DeepCopy()
	stranger.UID = "uid-other"
	assert.Error(t, h.ServiceApplier.Adopt(t.Context(), stranger, desired))
}
