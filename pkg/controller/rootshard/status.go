package rootshard

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// The reasons of the RootShard's conditions. They are part of the API: keep them stable.
const (
	ReasonCertificatesIssued  = "CertificatesIssued"
	ReasonCertificatesPending = "CertificatesPending"
	ReasonReferencesFound     = "ReferencesFound"
	ReasonCacheServerNotFound = "CacheServerNotFound"
	ReasonDeleting            = "Deleting"
)

// observe computes the status of a RootShard from the host cluster's state, as the
// informers see it.
func (c *Controller) observe(rs *operatorv1alpha1.RootShard, desired rootshard.PKI) operatorv1alpha1.RootShardStatus {
	status := *rs.Status.DeepCopy()
	status.ObservedGeneration = rs.Generation

	pending := c.host.PendingCertificates(desired.Certificates)
	if len(pending) == 0 {
		setCondition(&status, rs, operatorv1alpha1.ConditionCertificatesReady, metav1.ConditionTrue, ReasonCertificatesIssued,
			fmt.Sprintf("all %d certificates are issued", len(desired.Certificates)))
	} else {
		setCondition(&status, rs, operatorv1alpha1.ConditionCertificatesReady, metav1.ConditionFalse, ReasonCertificatesPending,
			"waiting for cert-manager to issue "+summarize(pending))
	}

	if ref := rs.Spec.Cache; ref != nil && ref.Reference != nil {
		if _, err := c.cacheServers.CacheServers(rs.Namespace).Get(ref.Reference.Name); apierrors.IsNotFound(err) {
			setCondition(&status, rs, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionFalse, ReasonCacheServerNotFound,
				fmt.Sprintf("CacheServer %q does not exist in namespace %q", ref.Reference.Name, rs.Namespace))
		} else {
			setCondition(&status, rs, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionTrue, ReasonReferencesFound, "every referenced object exists")
		}
	} else {
		setCondition(&status, rs, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionTrue, ReasonReferencesFound, "every referenced object exists")
	}

	available, reason, message := c.host.ShardAvailable(rootshard.Shard(rs))
	setCondition(&status, rs, operatorv1alpha1.ConditionAvailable, available, reason, message)

	status.Shards = nil
	if shards, err := c.shards.Shards(rs.Namespace).List(everything); err == nil {
		for _, s := range shards {
			if s.Spec.RootShard.Reference != nil && s.Spec.RootShard.Reference.Name == rs.Name {
				status.Shards = append(status.Shards, operatorv1alpha1.ShardReference{Name: s.Name})
			}
		}
		sort.Slice(status.Shards, func(i, j int) bool { return status.Shards[i].Name < status.Shards[j].Name })
	}

	status.Phase = operatorv1alpha1.PhaseProvisioning
	if meta.IsStatusConditionTrue(status.Conditions, operatorv1alpha1.ConditionAvailable) &&
		meta.IsStatusConditionTrue(status.Conditions, operatorv1alpha1.ConditionCertificatesReady) {
		status.Phase = operatorv1alpha1.PhaseRunning
	}
	return status
}

// updateStatus writes the status only when it changed.
func (c *Controller) updateStatus(ctx context.Context, rs *operatorv1alpha1.RootShard, status operatorv1alpha1.RootShardStatus) error {
	if apiequality.Semantic.DeepEqual(rs.Status, status) {
		return nil
	}
	rs = rs.DeepCopy()
	rs.Status = status
	_, err := c.client.OperatorV1alpha1().RootShards(rs.Namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{FieldManager: controller.FieldManager})
	return err
}

// setCondition sets a condition, keeping its transition time when its status is unchanged.
func setCondition(status *operatorv1alpha1.RootShardStatus, rs *operatorv1alpha1.RootShard, t string, s metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: t, Status: s, Reason: reason, Message: message, ObservedGeneration: rs.Generation,
	})
}

// summarize names up to five items and counts the rest.
func summarize(items []string) string {
	sort.Strings(items)
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:5], ", "), len(items)-5)
}
