package hostcluster

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

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
