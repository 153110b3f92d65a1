package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CARotation is the body of the rotation subresource of RootShards and CacheServers: it
// starts or completes the two-phase rotation of certificate authorities. It is not stored
// itself: the rotation's state is the object's status.rotations.
type CARotation struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is what is asked for.
	Spec CARotationSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status is each named authority's rotation after the request.
	// +optional
	Status CARotationStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// CARotationSpec names the authorities and the phase.
type CARotationSpec struct {
	// Authorities are the CAs to rotate. A RootShard's: root (only with the namespace
	// bootstrap or an issuerRef), server, client, front-proxy-client, requestheader-client,
	// service-account, etcd-client, etcd-peer. A CacheServer's: ca.
	// +listType=set
	Authorities []string `json:"authorities" protobuf:"bytes,1,rep,name=authorities"`
	// Phase is Start or Complete.
	Phase CARotationRequestPhase `json:"phase" protobuf:"bytes,2,opt,name=phase,casttype=CARotationRequestPhase"`
	// ExcludeMembers are members the named authorities' rotations no longer wait for: a
	// RootShard's rotation waits for its Shards, FrontProxies and VirtualWorkspaces to be
	// Available again before it advances. They are added to each rotation's
	// status.rotations[].excludedMembers, with Start (also while the rotation is Preparing or
	// Prepared) or Complete (also while it is Completing). An excluded member may miss the new
	// CA, and then stops trusting and being trusted at Complete. A CacheServer has no members.
	// +optional
	// +listType=map
	// +listMapKey=kind
	// +listMapKey=name
	ExcludeMembers []CARotationMember `json:"excludeMembers,omitempty" protobuf:"bytes,3,rep,name=excludeMembers"`
}

// CARotationMember names a member of a RootShard that its rotations wait for, in the
// RootShard's namespace.
type CARotationMember struct {
	// Kind is Shard, FrontProxy or VirtualWorkspace.
	Kind string `json:"kind" protobuf:"bytes,1,opt,name=kind"`
	// Name is the member's name.
	Name string `json:"name" protobuf:"bytes,2,opt,name=name"`
}

// CARotationRequestPhase is the step a rotation request asks for.
type CARotationRequestPhase string

// The steps of a rotation.
const (
	// CARotationStart issues a new CA next to the old one, which every bundle trusts too.
	CARotationStart CARotationRequestPhase = "Start"
	// CARotationComplete drops the old CA: what it signed stops working.
	CARotationComplete CARotationRequestPhase = "Complete"
)

// CARotationStatus is the state of each authority the request named.
type CARotationStatus struct {
	// Rotations are the named authorities' rotations after the request.
	// +optional
	// +listType=map
	// +listMapKey=authority
	Rotations []CARotationState `json:"rotations,omitempty" protobuf:"bytes,1,rep,name=rotations"`
}

// CARotationPhase is where an authority's rotation stands.
type CARotationPhase string

// The phases of a rotation, as Gardener names them.
const (
	// CARotationPreparing: the new CA is being issued and distributed.
	CARotationPreparing CARotationPhase = "Preparing"
	// CARotationPrepared: every bundle trusts both CAs; Complete may be asked for.
	CARotationPrepared CARotationPhase = "Prepared"
	// CARotationCompleting: the old CA is being dropped.
	CARotationCompleting CARotationPhase = "Completing"
	// CARotationCompleted: only the new CA is left.
	CARotationCompleted CARotationPhase = "Completed"
)

// CARotationState is the rotation of one certificate authority.
type CARotationState struct {
	// Authority is the CA's role.
	Authority string `json:"authority" protobuf:"bytes,1,opt,name=authority"`
	// Phase is Preparing, Prepared, Completing or Completed.
	Phase CARotationPhase `json:"phase" protobuf:"bytes,2,opt,name=phase,casttype=CARotationPhase"`
	// Slot is the slot of the newest CA: 0 is the Secret <ca>, 1 the Secret <ca>-next. The
	// other slot holds the old CA until Complete.
	// +optional
	Slot int32 `json:"slot,omitempty" protobuf:"varint,3,opt,name=slot"`
	// LeavesSwitched says that new leaves and credentials come from the newest CA.
	// +optional
	LeavesSwitched bool `json:"leavesSwitched,omitempty" protobuf:"varint,4,opt,name=leavesSwitched"`
	// LastInitiationTime is when Start was asked for.
	// +optional
	LastInitiationTime *metav1.Time `json:"lastInitiationTime,omitempty" protobuf:"bytes,5,opt,name=lastInitiationTime"`
	// LastPreparedTime is when the authority became Prepared.
	// +optional
	LastPreparedTime *metav1.Time `json:"lastPreparedTime,omitempty" protobuf:"bytes,6,opt,name=lastPreparedTime"`
	// LastCompletionTriggeredTime is when Complete was asked for.
	// +optional
	LastCompletionTriggeredTime *metav1.Time `json:"lastCompletionTriggeredTime,omitempty" protobuf:"bytes,7,opt,name=lastCompletionTriggeredTime"`
	// LastCompletionTime is when the old CA was dropped.
	// +optional
	LastCompletionTime *metav1.Time `json:"lastCompletionTime,omitempty" protobuf:"bytes,8,opt,name=lastCompletionTime"`
	// ExcludedMembers are the members this rotation does not wait for, as the rotation
	// requests named them (CARotationSpec.ExcludeMembers). Members created after
	// LastInitiationTime are not waited for either.
	// +optional
	// +listType=map
	// +listMapKey=kind
	// +listMapKey=name
	ExcludedMembers []CARotationMember `json:"excludedMembers,omitempty" protobuf:"bytes,9,rep,name=excludedMembers"`
}
