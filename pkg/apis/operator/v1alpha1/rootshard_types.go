package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:method=CreateKubeconfig,verb=create,subresource=kubeconfig,input=KubeconfigRequest,result=KubeconfigRequest
// +genclient:method=Rotate,verb=create,subresource=rotation,input=CARotation,result=CARotation
// +genclient:method=Backup,verb=create,subresource=backup,input=EtcdSnapshotRequest,result=EtcdSnapshotRequest
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RootShard is the first shard of a kcp installation: it owns the setup's PKI and is the
// shard every other Shard and FrontProxy points at.
type RootShard struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the desired state.
	// +optional
	Spec RootShardSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	// Status is the observed state.
	// +optional
	Status RootShardStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// RootShardSpec is the desired state of a RootShard.
type RootShardSpec struct {
	CommonShardSpec `json:",inline" protobuf:"bytes,1,opt,name=commonShardSpec"`

	// External is how the kcp installation is reached from outside the cluster.
	External ExternalConfig `json:"external" protobuf:"bytes,2,opt,name=external"`
	// Cache names the CacheServer the root shard uses. Without it kcp runs its embedded cache.
	// +optional
	Cache *CacheConfig `json:"cache,omitempty" protobuf:"bytes,3,opt,name=cache"`
	// Certificates configures where the root CA comes from. Immutable.
	// +optional
	Certificates *Certificates `json:"certificates,omitempty" protobuf:"bytes,4,opt,name=certificates"`
	// Proxy configures the RootShard's internal front proxy, as kcp-operator's: the
	// Deployment and Service <name>-proxy, through which the server reaches every shard's
	// workspaces. No user traffic should go through it: use a FrontProxy.
	Proxy *RootShardProxySpec `json:"proxy,omitempty" protobuf:"bytes,5,opt,name=proxy"`
	// Version is the kcp release of the whole setup (v0.32.3): of the RootShard and of every
	// Shard, CacheServer, VirtualWorkspace and FrontProxy of it whose spec.image.tag is empty.
	// A change rolls them in order, group by group (docs/kcp-versions.md, "Upgrading a
	// setup"). Without it each component runs its own tag or the server's default.
	// +optional
	Version string `json:"version,omitempty" protobuf:"bytes,6,opt,name=version"`
	// Upgrade shapes the roll of a change of Version.
	// +optional
	Upgrade *UpgradeStrategy `json:"upgrade,omitempty" protobuf:"bytes,7,opt,name=upgrade"`
	// Maintenance is the setup's weekly maintenance window and what the server may change in
	// it on its own.
	// +optional
	Maintenance *Maintenance `json:"maintenance,omitempty" protobuf:"bytes,8,opt,name=maintenance"`
}

// RootShardStatus is the observed state of a RootShard.
type RootShardStatus struct {
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
	// Shards are the Shards that point at this RootShard.
	// +optional
	// +listType=map
	// +listMapKey=name
	Shards []ShardReference `json:"shards,omitempty" protobuf:"bytes,4,rep,name=shards"`
	// Rotations are the rotations of the RootShard's CAs, asked for through the rotation
	// subresource.
	// +optional
	// +listType=map
	// +listMapKey=authority
	Rotations []CARotationState `json:"rotations,omitempty" protobuf:"bytes,5,rep,name=rotations"`
	// Version is the release of the setup and the state of its roll, written by the server
	// alone.
	// +optional
	Version *SetupVersion `json:"version,omitempty" protobuf:"bytes,6,opt,name=version"`
	// Etcd is the state of the managed etcd (each member's database size and alarms), written
	// by the server alone.
	// +optional
	Etcd *ManagedEtcdStatus `json:"etcd,omitempty" protobuf:"bytes,7,opt,name=etcd"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RootShardList is a list of RootShards.
type RootShardList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items           []RootShard `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// RootShardProxySpec shapes the RootShard's internal front proxy, as kcp-operator's: image
// (default: the root shard's), replicas, resources, templates (certificate keys server,
// kubeconfig and requestheader), extraArgs, extra volumes and mounts, and logging.
type RootShardProxySpec struct {
	ComponentSpec `json:",inline" protobuf:"bytes,1,opt,name=componentSpec"`
}
