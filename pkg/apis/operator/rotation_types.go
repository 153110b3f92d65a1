package operator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CARotation is the body of the rotation subresource of RootShards and CacheServers: it
// starts or completes the two-phase rotation of certificate authorities. It is not stored
// itself: the rotation's state is the object's status.rotations.
type CARotation struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec is what is asked for.
	Spec CARotationSpec
	// Status is each named authority's rotation after the request.
	Status CARotationStatus
}

// CARotationSpec names the authorities and the phase.
type CARotationSpec struct {
	// Authorities are the CAs to rotate.
	Authorities []string
	// Phase is Start or Complete.
	Phase CARotationRequestPhase
	// ExcludeMembers are members the rotations no longer wait for.
	ExcludeMembers []CARotationMember
}

// CARotationMember names a member of a RootShard that its rotations wait for, in the
// RootShard's namespace.
type CARotationMember struct {
	// Kind is Shard, FrontProxy or VirtualWorkspace.
	Kind string
	// Name is the member's name.
	Name string
}

// CARotationRequestPhase is the step a rotation request asks for.
type CARotationRequestPhase string

// The steps of a rotation.
const (
	CARotationStart    CARotationRequestPhase = "Start"
	CARotationComplete CARotationRequestPhase = "Complete"
)

// CARotationStatus is the state of each authority the request named.
type CARotationStatus struct {
	Rotations []CARotationState
}

// CARotationPhase is where an authority's rotation stands.
type CARotationPhase string

// The phases of a rotation, as Gardener names them.
const (
	CARotationPreparing  CARotationPhase = "Preparing"
	CARotationPrepared   CARotationPhase = "Prepared"
	CARotationCompleting CARotationPhase = "Completing"
	CARotationCompleted  CARotationPhase = "Completed"
)

// CARotationState is the rotation of one certificate authority.
type CARotationState struct {
	// Authority is the CA's role.
	Authority string
	// Phase is Preparing, Prepared, Completing or Completed.
	Phase CARotationPhase
	// Slot is the slot of the newest CA: 0 is the Secret <ca>, 1 the Secret <ca>-next. The
	// other slot holds the old CA until Complete.
	Slot int32
	// LeavesSwitched says that new leaves and credentials come from the newest CA.
	LeavesSwitched bool
	// LastInitiationTime is when Start was asked for.
	LastInitiationTime *metav1.Time
	// LastPreparedTime is when the authority became Prepared.
	LastPreparedTime *metav1.Time
	// LastCompletionTriggeredTime is when Complete was asked for.
	LastCompletionTriggeredTime *metav1.Time
	// LastCompletionTime is when the old CA was dropped.
	LastCompletionTime *metav1.Time
	// ExcludedMembers are the members this rotation does not wait for.
	ExcludedMembers []CARotationMember
}
