package hostcluster

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/pki"
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

// DeleteEtcdClaims deletes a managed etcd's volume claims, its data, which stays after its
// owner is gone unless the owner says otherwise: each claim of names (etcd.Cluster's
// ClaimNames) that carries the owner's uid (pki.LabelOwnerUID), with that claim's UID as a
// precondition. A claim of the name that is another's (another owner UID, or none: made
// before the mark, or by someone else) stays, and so does one that was replaced since it was
// read; kept are the names of those that stayed.
func (c *Host) DeleteEtcdClaims(ctx context.Context, namespace string, names []string, uid types.UID) (kept []string, err error) {
	claims := c.Kube.CoreV1().PersistentVolumeClaims(namespace)
	for _, name := range names {
		pvc, err := claims.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return kept, fmt.Errorf("reading PersistentVolumeClaim %s/%s: %w", namespace, name, err)
		}
		if uid == "" || pvc.Labels[pki.LabelOwnerUID] != string(uid) {
			kept = append(kept, name)
			continue
		}
		err = claims.Delete(ctx, name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(pvc.UID))})
		observeWrite("PersistentVolumeClaim", err)
		switch {
		case apierrors.IsNotFound(err):
		case apierrors.IsConflict(err):
			// Replaced since it was read: another claim of the name, which is not judged here.
			kept = append(kept, name)
		case err != nil:
			return kept, fmt.Errorf("deleting PersistentVolumeClaim %s/%s: %w", namespace, name, err)
		default:
			klog.FromContext(ctx).V(2).Info("Deleted", "kind", "PersistentVolumeClaim", "object", klog.KRef(namespace, name))
		}
	}
	return kept, nil
}
