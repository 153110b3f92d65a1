package validation

import (
	"fmt"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// RotationActor is who takes a step of a rotation in status.rotations.
type RotationActor string

const (
	// RotationRequest is the rotation subresource, on a request: Start and Complete.
	RotationRequest RotationActor = "request"
	// RotationController is the server's own controllers, from what the host shows: the
	// leaves' switch, Prepared, the drop of the old CA and Completed.
	RotationController RotationActor = "controller"
)

// RotationStep is one changed entry of status.rotations, and who may take it.
type RotationStep struct {
	// Path is the entry's phase, status.rotations[i].phase.
	Path      *field.Path
	Authority string
	// From and To say the entry before and after, for a message.
	From, To string
	By       RotationActor
}

// RotationSteps returns the steps status.rotations takes from oldRotations to newRotations,
// and an error for each change that is no step of a rotation (docs/rotation.md): only Start
// adds an entry, in Preparing, or starts a Completed one again in its other slot; only
// Complete moves Prepared to Completing; the controllers switch the leaves, make Preparing
// Prepared, drop the old CA (lastCompletionTime) and make Completing Completed, one step at a
// time, and no step moves a slot otherwise. An entry is never removed. The controllers
// delete a CA's old slot by what status.rotations says, so a status writer must not be able
// to say it.
func RotationSteps(newRotations, oldRotations []operator.CARotationState, fldPath *field.Path) ([]RotationStep, field.ErrorList) {
	var steps []RotationStep
	var errs field.ErrorList
	for i, n := range newRotations {
		path := fldPath.Index(i).Child("phase")
		j := slices.IndexFunc(oldRotations, func(o operator.CARotationState) bool { return o.Authority == n.Authority })
		var o *operator.CARotationState
		if j >= 0 {
			o = &oldRotations[j]
			if apiequality.Semantic.DeepEqual(*o, n) {
				continue
			}
		}
		step := RotationStep{Path: path, Authority: n.Authority, From: describeRotation(o), To: describeRotation(&n)}
		by, ok := rotationStep(o, n)
		if !ok {
			errs = append(errs, field.Invalid(path, n.Phase, fmt.Sprintf(
				"the rotation of the %s CA cannot go from %s to %s: that is no step of a rotation", n.Authority, step.From, step.To)))
			continue
		}
		step.By = by
		steps = append(steps, step)
	}
	for j, o := range oldRotations {
		if !slices.ContainsFunc(newRotations, func(n operator.CARotationState) bool { return n.Authority == o.Authority }) {
			errs = append(errs, field.Invalid(fldPath.Index(j).Child("phase"), o.Phase, fmt.Sprintf(
				"the rotation of the %s CA cannot be removed", o.Authority)))
		}
	}
	return steps, errs
}

// rotationStep says who may take the step from o (nil: no rotation yet) to n, or that it is
// no step of a rotation.
func rotationStep(o *operator.CARotationState, n operator.CARotationState) (RotationActor, bool) {
	// sameBut reports whether n is o with change made.
	sameBut := func(o operator.CARotationState, change func(*operator.CARotationState)) bool {
		want := *o.DeepCopy()
		change(&want)
		return apiequality.Semantic.DeepEqual(want, n)
	}
	// A Start writes a new entry: the authority, Preparing in slot, and when.
	// A Start writes a new entry, with the members its request excludes.
	started := func(slot int32) bool {
		return n.LastInitiationTime != nil && sameBut(operator.CARotationState{Authority: n.Authority}, func(w *operator.CARotationState) {
			w.Phase, w.Slot, w.LastInitiationTime, w.ExcludedMembers = operator.CARotationPreparing, slot, n.LastInitiationTime, n.ExcludedMembers
		})
	}
	// A request excludes more members from a running rotation's wait (Start while Preparing or
	// Prepared, Complete while Prepared or Completing); it never takes one back.
	excludesMore := o != nil && isSuperset(n.ExcludedMembers, o.ExcludedMembers)
	if o != nil && o.Phase != operator.CARotationCompleted && len(n.ExcludedMembers) > len(o.ExcludedMembers) && excludesMore &&
		sameBut(*o, func(w *operator.CARotationState) { w.ExcludedMembers = n.ExcludedMembers }) {
		return RotationRequest, true
	}
	switch {
	case o == nil:
		return RotationRequest, started(1)
	case o.Phase == operator.CARotationCompleted:
		return RotationRequest, started(1 - o.Slot)
	case o.Phase == operator.CARotationPrepared:
		return RotationRequest, n.LastCompletionTriggeredTime != nil && excludesMore && sameBut(*o, func(w *operator.CARotationState) {
			w.Phase, w.LastCompletionTriggeredTime, w.ExcludedMembers = operator.CARotationCompleting, n.LastCompletionTriggeredTime, n.ExcludedMembers
		})
	case o.Phase == operator.CARotationPreparing:
		leavesSwitched := !o.LeavesSwitched && sameBut(*o, func(w *operator.CARotationState) { w.LeavesSwitched = true })
		prepared := n.LastPreparedTime != nil && sameBut(*o, func(w *operator.CARotationState) {
			w.Phase, w.LastPreparedTime = operator.CARotationPrepared, n.LastPreparedTime
		})
		return RotationController, leavesSwitched || prepared
	case o.Phase == operator.CARotationCompleting:
		leavesSwitched := !o.LeavesSwitched && sameBut(*o, func(w *operator.CARotationState) { w.LeavesSwitched = true })
		dropped := o.LeavesSwitched && o.LastCompletionTime == nil && n.LastCompletionTime != nil &&
			sameBut(*o, func(w *operator.CARotationState) { w.LastCompletionTime = n.LastCompletionTime })
		completed := o.LastCompletionTime != nil && sameBut(*o, func(w *operator.CARotationState) { w.Phase = operator.CARotationCompleted })
		return RotationController, leavesSwitched || dropped || completed
	}
	return "", false
}

// describeRotation says where a rotation is, for a message.
func describeRotation(st *operator.CARotationState) string {
	if st == nil {
		return "no rotation"
	}
	s := fmt.Sprintf("%s in slot %d", st.Phase, st.Slot)
	if st.LeavesSwitched {
		s += ", leaves switched"
	}
	if st.LastCompletionTime != nil {
		s += ", old CA dropped"
	}
	switch n := len(st.ExcludedMembers); n {
	case 0:
	case 1:
		s += ", 1 member excluded"
	default:
		s += fmt.Sprintf(", %d members excluded", n)
	}
	return s
}

// isSuperset reports whether every member of sub is in members.
func isSuperset(members, sub []operator.CARotationMember) bool {
	for _, m := range sub {
		if !slices.Contains(members, m) {
			return false
		}
	}
	return true
}
