package rotation

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// maxWaitsNamed bounds what the condition names of one rotation's waits; the rest are
// counted.
const maxWaitsNamed = 3

// Condition is operatorv1alpha1.ConditionCARotation of an object of generation from its
// rotations, or false when none runs and the condition is removed. waiting names, by
// authority, what a running rotation waits for before its next step (Waits); the message
// names the first few of each.
func Condition(generation int64, rotations []operatorv1alpha1.CARotationState, waiting map[string][]string) (metav1.Condition, bool) {
	var running, prepared []string
	for _, st := range rotations {
		switch st.Phase {
		case operatorv1alpha1.CARotationPreparing, operatorv1alpha1.CARotationCompleting:
			if w := waiting[st.Authority]; len(w) > 0 {
				running = append(running, fmt.Sprintf("%s (%s, waiting for %s)", st.Authority, st.Phase, FirstFew(w, maxWaitsNamed)))
			} else {
				running = append(running, fmt.Sprintf("%s (%s)", st.Authority, st.Phase))
			}
		case operatorv1alpha1.CARotationPrepared:
			prepared = append(prepared, st.Authority)
		}
	}
	sort.Strings(running)
	sort.Strings(prepared)
	c := metav1.Condition{Type: operatorv1alpha1.ConditionCARotation, ObservedGeneration: generation}
	switch {
	case len(running) > 0:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, operatorv1alpha1.ReasonRotating, "rotating the CAs "+strings.Join(running, "; ")
	case len(prepared) > 0:
		c.Status, c.Reason = metav1.ConditionTrue, operatorv1alpha1.ReasonWaitingForComplete
		c.Message = fmt.Sprintf("the CAs %s are Prepared: every bundle trusts the old and the new CA; ask for phase Complete to drop the old ones", strings.Join(prepared, ", "))
	default:
		return metav1.Condition{}, false
	}
	return c, true
}
