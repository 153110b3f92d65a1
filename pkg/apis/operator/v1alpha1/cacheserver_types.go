package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:method=Rotate,verb=create,subresource=rotation,input=CARotation,result=CARotation
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CacheServer is a kcp cache server shared by the shards of a setup.
type CacheServer struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the desired state.
	// +optional
	Spec CacheServerSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	// Status is the observed state.
	// +optional
	Status CacheServerStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// CacheServerSpec is the desired state of a CacheServer.
type CacheServerSpec struct {
	ComponentSpec `json:",inline" protobuf:"bytes,1,opt,name=componentSpec"`

	// ClusterDomain is the cluster's DNS domain. Defaults to cluster.local.
	// +optional
	ClusterDomain string `json:"clusterDomain,omitempty" protobuf:"bytes,2,opt,name=clusterDomain"`
	// Etcd is an external etcd cluster. Without it the cache server runs an embedded etcd and
	// may have only one replica.
	// +optional
	Etcd *EtcdConfig `json:"etcd,omitempty" protobuf:"bytes,3,opt,name=etcd"`
	// Certificates configures where the cache server's CA comes from. Immutable.
	// +optional
	Certificates *Certificates `json:"certificates,omitempty" protobuf:"bytes,4,opt,name=certificates"`
}

// CacheServerStatus is the observed state of a CacheServer.
type CacheServerStatus struct {
	// Phase is Provisioning, Running or Deleting.
	// +optional
	Phase Phase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=Phase"`
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,2,opt,name=observedGeneration"`
	// Conditions are Available and CertificatesReady.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,3,rep,name=conditions"`
	// Rotations are the rotations of the CacheServer's CA, asked for through the rotation
	// subresource.
	// +optional
	// +listType=map
	// +listMapKey=authority
	Rotations []CARotationState `json:"rotations,omitempty" protobuf:"bytes,4,rep,name=rotations"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CacheServerList is a list of CacheServers.
type CacheServerList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items           []CacheServer `json:"items" protobuf:"bytes,2,rep,name=items"`
}
