package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:method=CreateKubeconfig,verb=create,subresource=kubeconfig,input=KubeconfigRequest,result=KubeconfigRequest
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RootShard is the first shard of a kcp installation: it owns the setup's PKI and is the
// shard every other Shard and FrontProxy points at.
type RootShard struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec RootShardSpec `json:"spec,omitempty"`
	// Status is the observed state.
	// +optional
	Status RootShardStatus `json:"status,omitempty"`
}

// RootShardSpec is the desired state of a RootShard.
type RootShardSpec struct {
	CommonShardSpec `json:",inline"`

	// External is how the kcp installation is reached from outside the cluster.
	External ExternalConfig `json:"external"`
	// Cache names the CacheServer the root shard uses. Without it kcp runs its embedded cache.
	// +optional
	Cache *CacheConfig `json:"cache,omitempty"`
	// Certificates configures where the root CA comes from. Immutable.
	// +optional
	Certificates *Certificates `json:"certificates,omitempty"`
	// Proxy configures kcp-operator's internal root-shard front proxy. kcp-setups runs none:
	// its server reaches the root shard directly. Accepted with a warning and not realized.
	Proxy *RootShardProxySpec `json:"proxy,omitempty"`
}

// RootShardStatus is the observed state of a RootShard.
type RootShardStatus struct {
	// Phase is Provisioning, Running or Deleting.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Available, CertificatesReady and ReferenceValid.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Shards are the Shards that point at this RootShard.
	// +optional
	// +listType=map
	// +listMapKey=name
	Shards []ShardReference `json:"shards,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RootShardList is a list of RootShards.
type RootShardList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RootShard `json:"items"`
}

// RootShardProxySpec is kcp-operator's internal root-shard front proxy.
type RootShardProxySpec struct {
	ComponentSpec `json:",inline"`
}
