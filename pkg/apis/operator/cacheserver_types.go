package operator

import (
	corev1 "k8s.io/api/core/v1"
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
	// ClusterDomain is the cluster's DNS domain. Defaults to cluster.local.
	ClusterDomain string
	// Image overrides the kcp image.
	Image *ImageSpec
	// Replicas is the number of cache-server pods. More than one requires etcd.
	Replicas *int32
	// Resources of the cache-server container.
	Resources *corev1.ResourceRequirements
	// Etcd is an external etcd cluster. Without it the cache server runs an embedded etcd.
	Etcd *EtcdConfig
	// Certificates configures where the cache server's CA comes from. Immutable.
	Certificates *Certificates
	// CertificateTemplates customize the cache server's certificates, keyed by role.
	CertificateTemplates CertificateTemplateMap
	// ServiceTemplate customizes the cache server's Service.
	ServiceTemplate *ServiceTemplate
	// DeploymentTemplate customizes the cache server's Deployment.
	DeploymentTemplate *DeploymentTemplate
	// ExtraArgs are appended to the cache-server command line.
	ExtraArgs []string
	// ExtraVolumes are added to the pod.
	ExtraVolumes []corev1.Volume
	// ExtraVolumeMounts are added to the cache-server container.
	ExtraVolumeMounts []corev1.VolumeMount
	// Logging configures logging.
	Logging *LoggingSpec
}

// CacheServerStatus is the observed state of a CacheServer.
type CacheServerStatus struct {
	// Phase is Provisioning, Running or Deleting.
	Phase Phase
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration int64
	// Conditions are Available and CertificatesReady.
	Conditions []metav1.Condition
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CacheServerList is a list of CacheServers.
type CacheServerList struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []CacheServer
}
