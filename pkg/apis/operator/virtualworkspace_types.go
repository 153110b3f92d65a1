package operator

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualWorkspace is a virtual workspace server running next to a RootShard or Shard: kcp's
// own virtual workspaces out of process, or a third-party virtual API server.
type VirtualWorkspace struct {
	metav1.TypeMeta
	// Standard object metadata.
	metav1.ObjectMeta

	// Spec is the desired virtual workspace server.
	Spec VirtualWorkspaceSpec
	// Status is its observed state.
	Status VirtualWorkspaceStatus
}

// VirtualWorkspaceSpec is the desired state of a VirtualWorkspace.
type VirtualWorkspaceSpec struct {
	ComponentSpec

	// Target is the RootShard or Shard the server serves virtual workspaces for. Immutable.
	Target VirtualWorkspaceTarget
	// External is the address under which the server is reached.
	External ExternalConfig
	// Command replaces kcp's virtual-workspaces command, for a third-party server.
	Command []string
	// InitContainers run before the server, each with its own kubeconfig.
	InitContainers []VirtualWorkspaceInitContainer
	// CABundleSecretRef names a Secret whose tls.crt is added to the CA bundle the server trusts.
	CABundleSecretRef *corev1.LocalObjectReference
	// ClientCABundleRef names a Secret whose tls.crt is added to the client CA bundle.
	ClientCABundleRef *corev1.LocalObjectReference
	// KubeconfigSecretRef names a Secret with the kubeconfig (key kubeconfig) the server uses
	// toward its shard, a least-privilege identity instead of the generated admin one.
	KubeconfigSecretRef *corev1.LocalObjectReference
	// ClusterDomain is the cluster's DNS domain. Defaults to cluster.local.
	ClusterDomain string
}

// VirtualWorkspaceTarget names exactly one of a RootShard or a Shard.
type VirtualWorkspaceTarget struct {
	// RootShardRef names a RootShard.
	RootShardRef *corev1.LocalObjectReference
	// ShardRef names a Shard.
	ShardRef *corev1.LocalObjectReference
}

// VirtualWorkspaceInitContainer is a container that runs before the server.
type VirtualWorkspaceInitContainer struct {
	// Name of the container.
	Name string
	// Image of the container. Defaults to the server's image.
	Image *ImageSpec
	// Command of the container.
	Command []string
	// Args of the container.
	Args []string
	// KubeconfigSecretRef names a Secret with a kubeconfig (key kubeconfig) for the container.
	KubeconfigSecretRef *corev1.LocalObjectReference
	// Resources of the container.
	Resources *corev1.ResourceRequirements
	// Volumes are added to the pod for the container.
	Volumes []corev1.Volume
	// VolumeMounts of the container.
	VolumeMounts []corev1.VolumeMount
}

// VirtualWorkspaceStatus is the observed state of a VirtualWorkspace.
type VirtualWorkspaceStatus struct {
	// Phase is Provisioning, Running or Deleting.
	Phase Phase
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration int64
	// Conditions are Available, CertificatesReady and ReferenceValid.
	Conditions []metav1.Condition
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualWorkspaceList is a list of VirtualWorkspaces.
type VirtualWorkspaceList struct {
	metav1.TypeMeta
	// Standard list metadata.
	metav1.ListMeta
	Items []VirtualWorkspace
}
