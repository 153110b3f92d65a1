package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualWorkspace is a virtual workspace server running next to a RootShard or Shard: kcp's
// own virtual workspaces out of process, or a third-party virtual API server.
type VirtualWorkspace struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the desired virtual workspace server.
	Spec VirtualWorkspaceSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	// Status is its observed state.
	Status VirtualWorkspaceStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// VirtualWorkspaceSpec is the desired state of a VirtualWorkspace.
type VirtualWorkspaceSpec struct {
	ComponentSpec `json:",inline" protobuf:"bytes,1,opt,name=componentSpec"`

	// Target is the RootShard or Shard the server serves virtual workspaces for. Immutable.
	Target VirtualWorkspaceTarget `json:"target" protobuf:"bytes,2,opt,name=target"`
	// External is the address under which the server is reached.
	External ExternalConfig `json:"external" protobuf:"bytes,3,opt,name=external"`
	// Command replaces kcp's virtual-workspaces command, for a third-party server.
	// +listType=atomic
	Command []string `json:"command,omitempty" protobuf:"bytes,4,rep,name=command"`
	// InitContainers run before the server, each with its own kubeconfig.
	// +listType=map
	// +listMapKey=name
	InitContainers []VirtualWorkspaceInitContainer `json:"initContainers,omitempty" protobuf:"bytes,5,rep,name=initContainers"`
	// CABundleSecretRef names a Secret whose tls.crt is added to the CA bundle the server trusts.
	CABundleSecretRef *corev1.LocalObjectReference `json:"caBundleSecretRef,omitempty" protobuf:"bytes,6,opt,name=caBundleSecretRef"`
	// ClientCABundleRef names a Secret whose tls.crt is added to the client CA bundle.
	ClientCABundleRef *corev1.LocalObjectReference `json:"clientCABundleRef,omitempty" protobuf:"bytes,7,opt,name=clientCABundleRef"`
	// KubeconfigSecretRef names a Secret with the kubeconfig (key kubeconfig) the server uses
	// toward its shard, a least-privilege identity instead of the generated admin one.
	KubeconfigSecretRef *corev1.LocalObjectReference `json:"kubeconfigSecretRef,omitempty" protobuf:"bytes,8,opt,name=kubeconfigSecretRef"`
	// ClusterDomain is the cluster's DNS domain. Defaults to cluster.local.
	ClusterDomain string `json:"clusterDomain,omitempty" protobuf:"bytes,9,opt,name=clusterDomain"`
}

// VirtualWorkspaceTarget names exactly one of a RootShard or a Shard.
type VirtualWorkspaceTarget struct {
	// RootShardRef names a RootShard.
	RootShardRef *corev1.LocalObjectReference `json:"rootShardRef,omitempty" protobuf:"bytes,1,opt,name=rootShardRef"`
	// ShardRef names a Shard.
	ShardRef *corev1.LocalObjectReference `json:"shardRef,omitempty" protobuf:"bytes,2,opt,name=shardRef"`
}

// VirtualWorkspaceInitContainer is a container that runs before the server.
type VirtualWorkspaceInitContainer struct {
	// Name of the container.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Image of the container. Defaults to the server's image.
	Image *ImageSpec `json:"image,omitempty" protobuf:"bytes,2,opt,name=image"`
	// Command of the container.
	// +listType=atomic
	Command []string `json:"command,omitempty" protobuf:"bytes,3,rep,name=command"`
	// Args of the container.
	// +listType=atomic
	Args []string `json:"args,omitempty" protobuf:"bytes,4,rep,name=args"`
	// KubeconfigSecretRef names a Secret with a kubeconfig (key kubeconfig) for the container.
	KubeconfigSecretRef *corev1.LocalObjectReference `json:"kubeconfigSecretRef,omitempty" protobuf:"bytes,5,opt,name=kubeconfigSecretRef"`
	// Resources of the container.
	Resources *corev1.ResourceRequirements `json:"resources,omitempty" protobuf:"bytes,6,opt,name=resources"`
	// Volumes are added to the pod for the container.
	// +listType=map
	// +listMapKey=name
	Volumes []corev1.Volume `json:"volumes,omitempty" protobuf:"bytes,7,rep,name=volumes"`
	// VolumeMounts of the container.
	// +listType=atomic
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty" protobuf:"bytes,8,rep,name=volumeMounts"`
}

// VirtualWorkspaceStatus is the observed state of a VirtualWorkspace.
type VirtualWorkspaceStatus struct {
	// Phase is Provisioning, Running or Deleting.
	Phase Phase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=Phase"`
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,2,opt,name=observedGeneration"`
	// Conditions are Available, CertificatesReady and ReferenceValid.
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,3,rep,name=conditions"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualWorkspaceList is a list of VirtualWorkspaces.
type VirtualWorkspaceList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items           []VirtualWorkspace `json:"items" protobuf:"bytes,2,rep,name=items"`
}
