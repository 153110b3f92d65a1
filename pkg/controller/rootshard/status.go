package rootshard

import (
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// The reasons of the RootShard's conditions. They are part of the API: keep them stable.
const (
	ReasonReferencesFound     = operatorv1alpha1.ReasonReferencesFound
	ReasonCacheServerNotFound = operatorv1alpha1.ReasonCacheServerNotFound
	ReasonDeleting            = operatorv1alpha1.ReasonDeleting
)

// observe computes the status of a RootShard from the host cluster's state, as the
// informers see it.
// cacheErr, when set, is why the copy of a cache-client Secret that spec.cache.secretRef
// names cannot be used.
func (c *Controller) observe(rs *operatorv1alpha1.RootShard, desired rootshard.PKI, cacheErr *reference.Error) operatorv1alpha1.RootShardStatus {
	status := *rs.Status.DeepCopy()
	status.ObservedGeneration = rs.Generation

	controller.SetCertificatesReady(&status.Conditions, rs.Generation, len(desired.Certificates), c.Host.PendingCertificates(desired.Certificates))

	if cacheErr != nil {
		setCondition(&status, rs, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionFalse, cacheErr.Reason, cacheErr.Message)
	} else if ref := rs.Spec.Cache; ref != nil && ref.Reference != nil {
		if _, err := kinds.CacheServer.Lister(c.Indexes, rs.Namespace).Get(ref.Reference.Name); apierrors.IsNotFound(err) {
			setCondition(&status, rs, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionFalse, ReasonCacheServerNotFound,
				fmt.Sprintf("CacheServer %q does not exist in namespace %q", ref.Reference.Name, rs.Namespace))
		} else {
			setCondition(&status, rs, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionTrue, ReasonReferencesFound, "every referenced object exists")
		}
	} else {
		setCondition(&status, rs, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionTrue, ReasonReferencesFound, "every referenced object exists")
	}

	available, reason, message := c.Host.ServerAvailable(rootshard.Server(rs))
	setCondition(&status, rs, operatorv1alpha1.ConditionAvailable, available, reason, message)

	status.Shards = nil
	for _, s := range kinds.ShardsOf(c.Indexes, rs.Namespace, rs.Name) {
		status.Shards = append(status.Shards, operatorv1alpha1.ShardReference{Name: s.Name})
	}
	sort.Slice(status.Shards, func(i, j int) bool { return status.Shards[i].Name < status.Shards[j].Name })
	// Then the Shards of other clusters its Links' remotes report, by Link.
	status.Shards = append(status.Shards, linkedShards(kinds.LinksOf(c.Indexes, rs.Namespace, rs.Name))...)

	status.Phase = controller.Phase(status.Conditions)
	return status
}

// setCondition sets a condition of a RootShard's status.
func setCondition(status *operatorv1alpha1.RootShardStatus, rs *operatorv1alpha1.RootShard, t string, s metav1.ConditionStatus, reason, message string) {
	controller.SetCondition(&status.Conditions, rs.Generation, t, s, reason, message)
}

// linkedShards are the Shards the remotes of links report, by Link, then namespace and name.
func linkedShards(links []*operatorv1alpha1.Link) []operatorv1alpha1.ShardReference {
	var out []operatorv1alpha1.ShardReference
	for _, l := range links {
		for _, c := range l.Status.Consumers {
			if c.Kind == string(operatorv1alpha1.LinkConsumerShard) {
				out = append(out, operatorv1alpha1.ShardReference{Name: c.Name, Link: l.Name, Namespace: c.Namespace})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.Link < b.Link || a.Link == b.Link && (a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name)
	})
	return out
}
