package rootshard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestLinkedShards: status.shards lists the Shards each Link's remote reports, by Link, then
// namespace and name; its other consumers are no shards.
func TestLinkedShards(t *testing.T) {
	link := func(name string, consumers ...operatorv1alpha1.LinkConsumerStatus) *operatorv1alpha1.Link {
		return &operatorv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "a"}, Status: operatorv1alpha1.LinkStatus{Consumers: consumers}}
	}
	c := func(kind, namespace, name string) operatorv1alpha1.LinkConsumerStatus {
		return operatorv1alpha1.LinkConsumerStatus{Kind: kind, Namespace: namespace, Name: name}
	}
	got := linkedShards([]*operatorv1alpha1.Link{
		link("eu-2", c("Shard", "b", "s-1")),
		link("eu-1", c("Shard", "c", "s-1"), c("FrontProxy", "b", "edge"), c("Shard", "b", "s-2"), c("Kubeconfig", "b", "admin")),
	})
	assert.Equal(t, []operatorv1alpha1.ShardReference{
		{Name: "s-2", Link: "eu-1", Namespace: "b"}, {Name: "s-1", Link: "eu-1", Namespace: "c"}, {Name: "s-1", Link: "eu-2", Namespace: "b"},
	}, got)
}
