package hostcluster

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	"k8s.io/klog/v2"
)

// WithStatefulSets gives the host its cache of StatefulSets (the managed etcd clusters), and
// their applier; someone else's change to one is undone, as for Deployments.
func (c *Host) WithStatefulSets(lister appsv1listers.StatefulSetLister) *Host {
	c.StatefulSets = lister
	c.StatefulSetApplier = Applied[*appsv1ac.StatefulSetApplyConfiguration]{
		Kind:   "StatefulSet",
		Labels: func(o *appsv1ac.StatefulSetApplyConfiguration) map[string]string { return o.Labels },
		Lookup: func(ctx context.Context, ns, name string) (metav1.Object, error) {
			list, err := c.claimKube().AppsV1().StatefulSets(ns).List(ctx, byName(name))
			return listed(name, list, err)
		},
		Key:      func(o *appsv1ac.StatefulSetApplyConfiguration) (string, string) { return *o.Namespace, *o.Name },
		Annotate: func(o *appsv1ac.StatefulSetApplyConfiguration, a map[string]string) { o.WithAnnotations(a) },
		Mark:     func(o *appsv1ac.StatefulSetApplyConfiguration, l map[string]string) { o.WithLabels(l) },
		Get:      func(ns, name string) (metav1.Object, error) { return c.StatefulSets.StatefulSets(ns).Get(name) },
		Apply: func(ctx context.Context, o *appsv1ac.StatefulSetApplyConfiguration) (metav1.Object, error) {
			return applied(c.Kube.AppsV1().StatefulSets(*o.Namespace).Apply(ctx, o, ApplyOptions))
		},
	}.WithDriftDetection()
	return c
}

// StatefulSetReady tells whether a StatefulSet has rolled out with every replica ready, and
// how many are.
func StatefulSetReady(s *appsv1.StatefulSet) (ready bool, readyReplicas, want int32) {
	want = 1
	if s.Spec.Replicas != nil {
		want = *s.Spec.Replicas
	}
	st := s.Status
	rolledOut := st.ObservedGeneration >= s.Generation && st.UpdatedReplicas == want &&
		(st.UpdateRevision == "" || st.CurrentRevision == st.UpdateRevision)
	return rolledOut && st.ReadyReplicas == want && st.Replicas == want, st.ReadyReplicas, want
}

// DeleteVolumeClaims deletes the PersistentVolumeClaims a selector matches: a managed etcd's
// data, which stays after its owner is gone unless the owner says otherwise.
func (c *Host) DeleteVolumeClaims(ctx context.Context, namespace, selector string) error {
	claims := c.Kube.CoreV1().PersistentVolumeClaims(namespace)
	list, err := claims.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("listing PersistentVolumeClaims %s: %w", selector, err)
	}
	for _, pvc := range list.Items {
		err := claims.Delete(ctx, pvc.Name, metav1.DeleteOptions{})
		observeWrite("PersistentVolumeClaim", err)
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting PersistentVolumeClaim %s/%s: %w", namespace, pvc.Name, err)
		}
		klog.FromContext(ctx).V(2).Info("Deleted", "kind", "PersistentVolumeClaim", "object", klog.KRef(namespace, pvc.Name))
	}
	return nil
}
