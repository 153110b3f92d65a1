package operator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CacheServer is a kcp cache server shared by the shards of a setup.
type CacheServer struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec is the desired state.
	Spec CacheServerSpec
	// Status is the observed state.
	Status CacheServerStatus
}

// CacheServerSpec is the desired state of a CacheServer.
type CacheServerSpec struct {
	ComponentSpec

	// ClusterDomain is the cluster's DNS domain. Defaults to cluster.local.
	ClusterDomain string
	// Etcd is an external etcd cluster. Without it the cache server runs an embedded etcd and
	// may have only one replica.
	Etcd *EtcdConfig
	// Certificates configures where the cache server's CA comes from. Immutable.
	Certificates *Certificates
}

// CacheServerStatus is the observed state of a CacheServer.
type CacheServerStatus struct {
	// Phase is Provisioning, Running or Deleting.
	Phase Phase
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration int64
	// Conditions are Available and CertificatesReady.
	Conditions []metav1.Condition
	// Rotations are the rotations of the CacheServer's CA (rotation subresource).
	Rotations []CARotationState
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CacheServerList is a list of CacheServers.
type CacheServerList struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []CacheServer
}
