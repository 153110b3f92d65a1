package link

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestColumns: kubectl get links prints the RootShard, the identity, the consumer kinds and
// Ready, which is Unknown until a controller reports it.
func TestColumns(t *testing.T) {
	l := link()
	l.Spec.Consumers = []operator.LinkConsumerKind{operator.LinkConsumerShard, operator.LinkConsumerKubeconfig}
	var names []string
	for _, c := range Kind.Table.Columns {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"RootShard", "Identity", "Consumers", "Ready"}, names)
	cells := func(o *operator.Link) []any {
		var out []any
		for _, c := range Kind.Table.Columns {
			out = append(out, c.Cell(o))
		}
		return out
	}
	assert.Equal(t, []any{"root", "eu-1.links.example.com", "Shard,Kubeconfig", "Unknown"}, cells(l))
	l.Status.Conditions = []metav1.Condition{{Type: operatorv1alpha1.ConditionLinkReady, Status: metav1.ConditionFalse}}
	assert.Equal(t, "False", cells(l)[3])
}
