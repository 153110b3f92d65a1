package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CacheServer is a kcp cache server shared by the shards of a setup.
type CacheServer struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec CacheServerSpec `json:"spec,omitempty"`
	// Status is the observed state.
	// +optional
	Status CacheServerStatus `json:"status,omitempty"`
}

// CacheServerSpec is the desired state of a CacheServer.
type CacheServerSpec struct {
	ComponentSpec `json:",inline"`

	// ClusterDomain is the cluster's DNS domain. Defaults to cluster.local.
	// +optional
	ClusterDomain string `json:"clusterDomain,omitempty"`
	// Etcd is an external etcd cluster. Without it the cache server runs an embedded etcd and
	// may have only one replica.
	// +optional
	Etcd *EtcdConfig `json:"etcd,omitempty"`
	// Certificates configures where the cache server's CA comes from. Immutable.
	// +optional
	Certificates *Certificates `json:"certificates,omitempty"`
}

// CacheServerStatus is the observed state of a CacheServer.
type CacheServerStatus struct {
	// Phase is Provisioning, Running or Deleting.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Available and CertificatesReady.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CacheServerList is a list of CacheServers.
type CacheServerList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CacheServer `json:"items"`
}
