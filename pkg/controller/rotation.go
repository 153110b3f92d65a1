package controller

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// SetRotationCondition sets operatorv1alpha1.ConditionCARotation from rotations, or removes it when none runs.
func SetRotationCondition(conditions *[]metav1.Condition, generation int64, rotations []operatorv1alpha1.CARotationState) {
	var running, prepared []string
	for _, st := range rotations {
		switch st.Phase {
		case operatorv1alpha1.CARotationPreparing, operatorv1alpha1.CARotationCompleting:
			running = append(running, fmt.Sprintf("%s (%s)", st.Authority, st.Phase))
		case operatorv1alpha1.CARotationPrepared:
			prepared = append(prepared, st.Authority)
		}
	}
	sort.Strings(running)
	sort.Strings(prepared)
	switch {
	case len(running) > 0:
		SetCondition(conditions, generation, operatorv1alpha1.ConditionCARotation, metav1.ConditionFalse, operatorv1alpha1.ReasonRotating,
			"rotating the CAs "+strings.Join(running, ", "))
	case len(prepared) > 0:
		SetCondition(conditions, generation, operatorv1alpha1.ConditionCARotation, metav1.ConditionTrue, operatorv1alpha1.ReasonWaitingForComplete,
			fmt.Sprintf("the CAs %s are Prepared: every bundle trusts the old and the new CA; ask for phase Complete to drop the old ones", strings.Join(prepared, ", ")))
	default:
		meta.RemoveStatusCondition(conditions, operatorv1alpha1.ConditionCARotation)
	}
}
