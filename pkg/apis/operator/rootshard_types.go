package operator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RootShard is the first shard of a kcp installation: it owns the setup's PKI and is the
// shard every other Shard and FrontProxy points at.
type RootShard struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec is the desired state.
	Spec RootShardSpec
	// Status is the observed state.
	Status RootShardStatus
}

// RootShardSpec is the desired state of a RootShard.
type RootShardSpec struct {
	CommonShardSpec

	// External is how the kcp installation is reached from outside the cluster.
	External ExternalConfig
	// Cache names the CacheServer the root shard uses. Without it kcp runs its embedded cache.
	Cache *CacheConfig
	// Certificates configures where the root CA comes from. Immutable.
	Certificates *Certificates
	// Proxy configures the RootShard's internal front proxy, as kcp-operator's: the
	// Deployment and Service <name>-proxy, through which the server reaches every shard's
	// workspaces. No user traffic should go through it: use a FrontProxy.
	Proxy *RootShardProxySpec
	// Version is the kcp release of the whole setup.
	Version string
	// Upgrade shapes the roll of a change of Version.
	Upgrade *UpgradeStrategy
	// Maintenance is the setup's weekly maintenance window.
	Maintenance *Maintenance
}

// RootShardStatus is the observed state of a RootShard.
type RootShardStatus struct {
	// Phase is Provisioning, Running or Deleting.
	Phase Phase
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration int64
	// Conditions are Available, CertificatesReady and ReferenceValid.
	Conditions []metav1.Condition
	// Shards are the Shards that point at this RootShard.
	Shards []ShardReference
	// Rotations are the rotations of the RootShard's CAs (rotation subresource).
	Rotations []CARotationState
	// Version is the release of the setup and the state of its roll (server-written).
	Version *SetupVersion
	// Etcd is the state of the managed etcd, written by the server alone.
	Etcd *ManagedEtcdStatus
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RootShardList is a list of RootShards.
type RootShardList struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []RootShard
}

// RootShardProxySpec shapes the RootShard's internal front proxy, as kcp-operator's: image
// (default: the root shard's), replicas, resources, templates (certificate keys server,
// kubeconfig and requestheader), extraArgs, extra volumes and mounts, and logging.
type RootShardProxySpec struct {
	ComponentSpec
}
