package operator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Shard is an additional kcp shard that joins a RootShard.
type Shard struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec is the desired state.
	Spec ShardSpec
	// Status is the observed state.
	Status ShardStatus
}

// ShardSpec is the desired state of a Shard.
type ShardSpec struct {
	CommonShardSpec

	// RootShard is the RootShard this shard joins. Immutable.
	RootShard RootShardConfig
	// Cache names a CacheServer that overrides the RootShard's cache.
	Cache *CacheConfig
}

// ShardStatus is the observed state of a Shard.
type ShardStatus struct {
	// Phase is Provisioning, Running or Deleting.
	Phase Phase
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration int64
	// Conditions are Available, CertificatesReady and ReferenceValid.
	Conditions []metav1.Condition
	// Etcd is the state of the managed etcd, written by the server alone.
	Etcd *ManagedEtcdStatus
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ShardList is a list of Shards.
type ShardList struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []Shard
}
