package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:method=CreateKubeconfig,verb=create,subresource=kubeconfig,input=KubeconfigRequest,result=KubeconfigRequest
// +genclient:method=Backup,verb=create,subresource=backup,input=EtcdSnapshotRequest,result=EtcdSnapshotRequest
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Shard is an additional kcp shard that joins a RootShard.
type Shard struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the desired state.
	// +optional
	Spec ShardSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	// Status is the observed state.
	// +optional
	Status ShardStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// ShardSpec is the desired state of a Shard.
type ShardSpec struct {
	CommonShardSpec `json:",inline" protobuf:"bytes,1,opt,name=commonShardSpec"`

	// RootShard is the RootShard this shard joins. Immutable.
	RootShard RootShardConfig `json:"rootShard" protobuf:"bytes,2,opt,name=rootShard"`
	// Cache names a CacheServer that overrides the RootShard's cache.
	// +optional
	Cache *CacheConfig `json:"cache,omitempty" protobuf:"bytes,3,opt,name=cache"`
}

// ShardStatus is the observed state of a Shard.
type ShardStatus struct {
	// Phase is Provisioning, Running or Deleting.
	// +optional
	Phase Phase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=Phase"`
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,2,opt,name=observedGeneration"`
	// Conditions are Available, CertificatesReady and ReferenceValid.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,3,rep,name=conditions"`
	// Etcd is the state of the managed etcd (each member's database size and alarms), written
	// by the server alone.
	// +optional
	Etcd *ManagedEtcdStatus `json:"etcd,omitempty" protobuf:"bytes,4,opt,name=etcd"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ShardList is a list of Shards.
type ShardList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items           []Shard `json:"items" protobuf:"bytes,2,rep,name=items"`
}
