package rotation

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// PhaseConflictError is a request the rotations' current phases do not allow: the
// subresource answers 409 with its message.
type PhaseConflictError struct {
	Reasons []string
}

func (e *PhaseConflictError) Error() string { return strings.Join(e.Reasons, "; ") }

// Apply returns the rotations after the request spec, at now, and whether they changed. It
// is all or nothing: when one named authority cannot take the step, nothing changes and the
// error says why for each. Asking again for a step already taken changes nothing, so that a
// client may retry. The request's excludeMembers are added to the excludedMembers of each
// named rotation that is running after the step (a new rotation starts with the request's
// alone); Start while Preparing or Prepared, and Complete while Completing, only add them.
func Apply(current []operator.CARotationState, spec operator.CARotationSpec, now time.Time) ([]operator.CARotationState, bool, error) {
	out := make([]operator.CARotationState, len(current))
	for i := range current {
		current[i].DeepCopyInto(&out[i])
	}
	t := metav1.NewTime(now.UTC().Truncate(time.Second))
	changed := false
	var conflict PhaseConflictError
	for _, a := range spec.Authorities {
		i := slices.IndexFunc(out, func(s operator.CARotationState) bool { return s.Authority == a })
		var st *operator.CARotationState
		if i >= 0 {
			st = &out[i]
		}
		switch spec.Phase {
		case operator.CARotationStart:
			switch {
			case st == nil:
				out = append(out, operator.CARotationState{Authority: a, Phase: operator.CARotationPreparing, Slot: 1, LastInitiationTime: &t})
				st = &out[len(out)-1]
				changed = true
			case st.Phase == operator.CARotationCompleted:
				*st = operator.CARotationState{Authority: a, Phase: operator.CARotationPreparing, Slot: pki.OtherSlot(st.Slot), LastInitiationTime: &t}
				changed = true
			case st.Phase == operator.CARotationCompleting:
				conflict.Reasons = append(conflict.Reasons, fmt.Sprintf(
					"the rotation of the %s CA is Completing: a new one can start once it is Completed", a))
				continue
			}
			// Preparing or Prepared: started already, the members are added.
		case operator.CARotationComplete:
			switch {
			case st == nil:
				conflict.Reasons = append(conflict.Reasons, fmt.Sprintf(
					"no rotation of the %s CA was started: ask for phase Start first", a))
			case st.Phase == operator.CARotationPreparing:
				conflict.Reasons = append(conflict.Reasons, fmt.Sprintf(
					"the rotation of the %s CA is Preparing: its new CA is not trusted everywhere yet, and completing now would break the clients that do not trust it; ask again once status.rotations says Prepared", a))
			case st.Phase == operator.CARotationPrepared:
				st.Phase = operator.CARotationCompleting
				st.LastCompletionTriggeredTime = &t
				changed = true
			}
			// Completing or Completed: completed already; a Completed rotation waits for
			// nothing.
			if st == nil || st.Phase != operator.CARotationCompleting {
				continue
			}
		}
		added, err := exclude(st, spec.ExcludeMembers)
		if err != "" {
			conflict.Reasons = append(conflict.Reasons, err)
		}
		changed = changed || added
	}
	if len(conflict.Reasons) > 0 {
		return current, false, &conflict
	}
	slices.SortFunc(out, func(a, b operator.CARotationState) int { return strings.Compare(a.Authority, b.Authority) })
	return out, changed, nil
}

// Of returns the rotations of the named authorities, in the order named.
func Of(rotations []operator.CARotationState, authorities []string) []operator.CARotationState {
	var out []operator.CARotationState
	for _, a := range authorities {
		if i := slices.IndexFunc(rotations, func(s operator.CARotationState) bool { return s.Authority == a }); i >= 0 {
			out = append(out, *rotations[i].DeepCopy())
		}
	}
	return out
}

// exclude adds members to the excludedMembers of st, each once, in order of kind and name.
// It reports whether it added one, or why it cannot: at most
// validation.MaxExcludedMembers.
func exclude(st *operator.CARotationState, members []operator.CARotationMember) (bool, string) {
	added := false
	all := slices.Clone(st.ExcludedMembers)
	for _, m := range members {
		if !slices.Contains(all, m) {
			all = append(all, m)
			added = true
		}
	}
	if len(all) > validation.MaxExcludedMembers {
		return false, fmt.Sprintf("the rotation of the %s CA would exclude %d members from its wait, more than %d", st.Authority, len(all), validation.MaxExcludedMembers)
	}
	slices.SortFunc(all, func(a, b operator.CARotationMember) int {
		return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Name, b.Name))
	})
	if added {
		st.ExcludedMembers = all
	}
	return added, ""
}
