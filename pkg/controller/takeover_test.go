package controller

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestATakeoverHappensOnce: the adopt annotation takes effect only until the object was
// first Available, which TakenOver records; an object Available before it was recorded is
// over too.
func TestATakeoverHappensOnce(t *testing.T) {
	l := Lifecycle[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus]{
		Kind: rootShards("rootshard")}
	adopt := map[string]string{operatorv1alpha1.AnnotationAdopt: operatorv1alpha1.AdoptKcpOperator}
	cond := func(t, s string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionStatus(s), Reason: "R"}
	}
	for _, tc := range []struct {
		name           string
		annotations    map[string]string
		conditions     []metav1.Condition
		takeover, over bool
	}{
		{name: "no annotation"},
		{name: "another value", annotations: map[string]string{operatorv1alpha1.AnnotationAdopt: "yes"}},
		{name: "annotated, never Available", annotations: adopt, conditions: []metav1.Condition{cond("Available", "False")}, takeover: true},
		{name: "annotated, new", annotations: adopt, takeover: true},
		{name: "annotated, taken over", annotations: adopt, conditions: []metav1.Condition{cond("Available", "True"), cond("TakenOver", "True")}},
		{name: "annotated, taken over, no longer Available", annotations: adopt,
			conditions: []metav1.Condition{cond("Available", "False"), cond("TakenOver", "True")}},
		{name: "annotated, Available before the record", annotations: adopt, conditions: []metav1.Condition{cond("Available", "True")}, over: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Annotations: tc.annotations}}
			rs.Status.Conditions = tc.conditions
			takeover, over := l.takeover(rs)
			assert.Equal(t, tc.takeover, takeover, "takeover")
			assert.Equal(t, tc.over, over, "over")
		})
	}
}
