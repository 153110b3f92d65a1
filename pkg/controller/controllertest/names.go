package controllertest

import (
	"context"
	"slices"
	"sort"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"

	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/resources/hostnames"
)

// StoreStatefulSets has the StatefulSet applier store what it applies in its cache, as the
// other appliers do (the fake clientset takes no apply), and CatchUpStatefulSets plays the
// StatefulSet controller: a managed etcd is realized in a unit test.
func (h *Host) StoreStatefulSets(t testing.TB) {
	h.StatefulSetApplier.Apply = func(_ context.Context, o *appsv1ac.StatefulSetApplyConfiguration) (metav1.Object, error) {
		obj := &appsv1.StatefulSet{}
		return obj, h.store(t, "statefulsets", "StatefulSet "+*o.Name, o, obj)
	}
}

// CatchUpStatefulSets has every StatefulSet rolled out with every replica ready.
func (h *Host) CatchUpStatefulSets(t testing.TB) {
	for _, o := range h.Caches["statefulsets"].List() {
		s := o.(*appsv1.StatefulSet).DeepCopy()
		n := int32(1)
		if s.Spec.Replicas != nil {
			n = *s.Spec.Replicas
		}
		s.Status = appsv1.StatefulSetStatus{Replicas: n, ReadyReplicas: n, UpdatedReplicas: n, AvailableReplicas: n}
		if err := h.Caches["statefulsets"].Update(s); err != nil {
			t.Fatal(err)
		}
	}
}

// HostNames are the names of the host objects of namespace the controllers wrote: what the
// appliers stored in the caches (the user's reference Secrets, which the test puts there,
// aside) and the Secrets cert-manager issues the Certificates into.
func (h *Host) HostNames(namespace string) []string {
	set := map[string]bool{}
	for cache, objs := range h.Caches {
		if cache == string(controller.ReferenceSecrets) {
			continue
		}
		for _, o := range objs.List() {
			m := o.(metav1.Object)
			if m.GetNamespace() != namespace {
				continue
			}
			set[m.GetName()] = true
			if cert, ok := o.(*cmv1.Certificate); ok && cert.Spec.SecretName != "" {
				set[cert.Spec.SecretName] = true
			}
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// AssertDerived fails unless every host object name of namespace but those in before
// (HostNames before the controller ran: what the test put there) and the namespace's shared
// bootstrap PKI is one derived says the object derives: the registry refuses collisions by
// derived names alone, so a name a builder writes and hostnames does not know would escape
// it.
func (h *Host) AssertDerived(t *testing.T, namespace string, before []string, derived []hostnames.Name) {
	t.Helper()
	written := h.HostNames(namespace)
	assert.Greater(t, len(written), len(before), "the controller wrote nothing")
	known := hostnames.Strings(derived)
	for _, name := range written {
		if slices.Contains(before, name) || slices.Contains(hostnames.Shared, name) {
			continue
		}
		assert.Contains(t, known, name, "the host object %s is written but not a derived name (pkg/resources/hostnames)", name)
	}
}
