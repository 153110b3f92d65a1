// Package controllertest is a stand-in for the host cluster in unit tests of one
// controller's sync: fake clients, caches the test fills by hand, and appliers that store
// what they apply in the caches, as the host and the informers would, and count it.
package controllertest

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"maps"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	cmfake "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/fake"
	cmlisters "github.com/cert-manager/cert-manager/pkg/client/listers/certmanager/v1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	policyv1listers "k8s.io/client-go/listers/policy/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
)

// Host is a fake host cluster.
type Host struct {
	*hostcluster.Host
	Kube    *kubefake.Clientset
	CM      *cmfake.Clientset
	Caches  map[string]cache.Indexer
	applied []string
	// deletesSeen are how many of the Kube and CM actions CatchUpDeletes went through.
	deletesSeen [2]int
}

// NewCache returns an indexer like an informer's, with the indexes of a kind (Kind.Indexers).
func NewCache(kind ...cache.Indexers) cache.Indexer {
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	for _, k := range kind {
		maps.Copy(indexers, k)
	}
	return cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers)
}

// NewHost returns a fake host cluster whose appliers fill its caches.
func NewHost(t testing.TB) *Host {
	h := &Host{Kube: kubefake.NewSimpleClientset(), CM: cmfake.NewSimpleClientset(), Caches: map[string]cache.Indexer{}}
	for _, k := range []string{"certificates", "issuers", "secrets", "services", "deployments", "configmaps", "poddisruptionbudgets", "statefulsets", "reference-secrets"} {
		h.Caches[k] = NewCache()
	}
	h.Host = hostcluster.NewHost(h.Kube, h.CM,
		cmlisters.NewCertificateLister(h.Caches["certificates"]), cmlisters.NewIssuerLister(h.Caches["issuers"]),
		corev1listers.NewSecretLister(h.Caches["secrets"]), corev1listers.NewServiceLister(h.Caches["services"]),
		appsv1listers.NewDeploymentLister(h.Caches["deployments"]), corev1listers.NewConfigMapLister(h.Caches["configmaps"])).
		WithDisruptionBudgets(policyv1listers.NewPodDisruptionBudgetLister(h.Caches["poddisruptionbudgets"])).
		WithStatefulSets(appsv1listers.NewStatefulSetLister(h.Caches["statefulsets"])).
		WithKcpOperatorTakeover()
	h.ReferenceSecrets = corev1listers.NewSecretLister(h.Caches[string(controller.ReferenceSecrets)])
	h.ConfigMapApplier.Apply = storing[*corev1ac.ConfigMapApplyConfiguration, corev1.ConfigMap](t, h, "configmaps", "ConfigMap")
	h.IssuerApplier.Apply = storing[*cmapply.IssuerApplyConfiguration, cmv1.Issuer](t, h, "issuers", "Issuer")
	h.CertificateApplier.Apply = storing[*cmapply.CertificateApplyConfiguration, cmv1.Certificate](t, h, "certificates", "Certificate")
	h.SecretApplier.Apply = storing[*corev1ac.SecretApplyConfiguration, corev1.Secret](t, h, "secrets", "Secret")
	h.ServiceApplier.Apply = storing[*corev1ac.ServiceApplyConfiguration, corev1.Service](t, h, "services", "Service")
	h.DeploymentApplier.Apply = storing[*appsv1ac.DeploymentApplyConfiguration, appsv1.Deployment](t, h, "deployments", "Deployment")
	h.DisruptionBudgetApplier.Apply = storing[*policyv1ac.PodDisruptionBudgetApplyConfiguration, policyv1.PodDisruptionBudget](t, h,
		"poddisruptionbudgets", "PodDisruptionBudget")
	return h
}

// storing is the Apply of an applier of apply configurations AC on the fake host: it stores
// what it applies, as an O, into the cache cacheName, and counts it as kind and name.
func storing[AC interface{ GetName() *string }, O any, PO interface {
	*O
	metav1.Object
}](t testing.TB, h *Host, cacheName, kind string) func(context.Context, AC) (metav1.Object, error) {
	return func(_ context.Context, ac AC) (metav1.Object, error) {
		obj := PO(new(O))
		return obj, h.store(t, cacheName, kind+" "+*ac.GetName(), ac, obj)
	}
}

// store turns an apply configuration into the object the host would hold, into a cache.
func (h *Host) store(t testing.TB, cacheName, what string, ac any, obj metav1.Object) error {
	data, err := json.Marshal(ac)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, obj))
	h.applied = append(h.applied, what)
	return h.Caches[cacheName].Update(obj)
}

// CatchUp plays cert-manager and the Deployment controller: every Certificate is issued into
// its Secret, and every Deployment is rolled out.
func (h *Host) CatchUp(t *testing.T) {
	for _, o := range h.Caches["certificates"].List() {
		cert := o.(*cmv1.Certificate).DeepCopy()
		cert.Status.Conditions = []cmv1.CertificateCondition{{Type: cmv1.CertificateConditionReady, Status: "True"}}
		require.NoError(t, h.Caches["certificates"].Update(cert))
		if _, exists, _ := h.Caches["secrets"].GetByKey(cert.Namespace + "/" + cert.Name); !exists {
			var labels map[string]string
			if st := cert.Spec.SecretTemplate; st != nil {
				labels = st.Labels // as cert-manager labels the Secrets it issues
			}
			require.NoError(t, h.Caches["secrets"].Add(&corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: cert.Namespace, Name: cert.Name, ResourceVersion: "1", Labels: labels},
				Data: map[string][]byte{
					"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte(cert.Name)}),
					"tls.key": pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte(cert.Name)}),
				},
			}))
		}
	}
	for _, o := range h.Caches["deployments"].List() {
		d := o.(*appsv1.Deployment).DeepCopy()
		n := *d.Spec.Replicas
		d.Status = appsv1.DeploymentStatus{Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
		require.NoError(t, h.Caches["deployments"].Update(d))
	}
}

// CatchUpDeletes removes from the caches what was deleted through the fake clients since
// the last call, as the informers would.
func (h *Host) CatchUpDeletes(t *testing.T) {
	for i, actions := range [][]clienttesting.Action{h.Kube.Actions(), h.CM.Actions()} {
		for _, a := range actions[h.deletesSeen[i]:] {
			d, ok := a.(clienttesting.DeleteAction)
			if !ok {
				continue
			}
			c, ok := h.Caches[d.GetResource().Resource]
			if !ok {
				continue
			}
			obj, exists, err := c.GetByKey(d.GetNamespace() + "/" + d.GetName())
			require.NoError(t, err)
			if exists {
				require.NoError(t, c.Delete(obj))
			}
		}
		h.deletesSeen[i] = len(actions)
	}
}

// Writes are the write requests made through the appliers and the fake clients, and those
// in more action lists (such as our own fake clientset's).
func (h *Host) Writes(more ...[]clienttesting.Action) []string {
	out := append([]string{}, h.applied...)
	for _, list := range append([][]clienttesting.Action{h.Kube.Actions(), h.CM.Actions()}, more...) {
		for _, a := range list {
			if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" {
				out = append(out, v+" "+a.GetResource().Resource+"/"+a.GetSubresource())
			}
		}
	}
	return out
}

// Reset forgets the writes so far.
func (h *Host) Reset() {
	h.applied = nil
	h.Kube.ClearActions()
	h.CM.ClearActions()
	h.deletesSeen = [2]int{}
}

// Secret is a Secret of the host's cache; the test fails when there is none.
func (h *Host) Secret(t *testing.T, namespace, name string) *corev1.Secret {
	t.Helper()
	obj, exists, err := h.Caches["secrets"].GetByKey(namespace + "/" + name)
	require.NoError(t, err)
	require.True(t, exists, "no Secret %s/%s", namespace, name)
	return obj.(*corev1.Secret)
}
