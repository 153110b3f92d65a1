package controller

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

func TestSetRotationCondition(t *testing.T) {
	var conds []metav1.Condition
	SetRotationCondition(&conds, 1, []operatorv1alpha1.CARotationState{{Authority: "server", Phase: "Prepared"}, {Authority: "client", Phase: "Preparing"}})
	assert.Equal(t, metav1.ConditionFalse, conds[0].Status)
	assert.Equal(t, operatorv1alpha1.ReasonRotating, conds[0].Reason)
	SetRotationCondition(&conds, 1, []operatorv1alpha1.CARotationState{{Authority: "server", Phase: "Prepared"}, {Authority: "client", Phase: "Prepared"}})
	assert.Equal(t, metav1.ConditionTrue, conds[0].Status)
	assert.Equal(t, operatorv1alpha1.ReasonWaitingForComplete, conds[0].Reason)
	assert.Contains(t, conds[0].Message, "client, server")
	SetRotationCondition(&conds, 1, []operatorv1alpha1.CARotationState{{Authority: "server", Phase: "Completed"}})
	assert.Empty(t, conds)
}
