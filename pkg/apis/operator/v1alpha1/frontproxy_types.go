package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:method=CreateKubeconfig,verb=create,subresource=kubeconfig,input=KubeconfigRequest,result=KubeconfigRequest
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// FrontProxy is a kcp-front-proxy in front of a RootShard and its Shards.
type FrontProxy struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec FrontProxySpec `json:"spec,omitempty"`
	// Status is the observed state.
	// +optional
	Status FrontProxyStatus `json:"status,omitempty"`
}

// FrontProxySpec is the desired state of a FrontProxy.
type FrontProxySpec struct {
	ComponentSpec `json:",inline"`

	// RootShard is the RootShard this front proxy serves. Immutable.
	RootShard RootShardConfig `json:"rootShard"`
	// External is the front proxy's own external address. Without it, the RootShard's is used.
	// +optional
	External *FrontProxyExternalConfig `json:"external,omitempty"`
	// ExternalHostname is the front proxy's external hostname. Deprecated: use
	// external.hostname. Accepted with a warning; not together with external.hostname.
	ExternalHostname string `json:"externalHostname,omitempty"`
	// Auth configures authentication.
	// +optional
	Auth *AuthSpec `json:"auth,omitempty"`
	// AdditionalPathMappings are routed after the built-in /clusters/ and /services/ mappings.
	// +optional
	// +listType=atomic
	AdditionalPathMappings []PathMappingEntry `json:"additionalPathMappings,omitempty"`
	// CABundleSecretRef names a Secret whose tls.crt is added to the server CA bundle.
	// +optional
	CABundleSecretRef *corev1.LocalObjectReference `json:"caBundleSecretRef,omitempty"`
	// ClientCABundleRef names a Secret whose tls.crt is added to the client CA bundle.
	// +optional
	ClientCABundleRef *corev1.LocalObjectReference `json:"clientCABundleRef,omitempty"`
}

// FrontProxyExternalConfig is the external address of a front proxy.
type FrontProxyExternalConfig struct {
	// Hostname under which the front proxy is reached.
	// +optional
	Hostname string `json:"hostname,omitempty"`
	// Port of the front proxy's Service. Defaults to the RootShard's external port.
	// +optional
	Port int32 `json:"port,omitempty"`
	// PrivateHostname is the hostname under which components inside the cluster reach the
	// front proxy instead of hostname. It is added to the serving certificate.
	PrivateHostname string `json:"privateHostname,omitempty"`
	// PrivatePort is the port that goes with privateHostname. Defaults to port.
	PrivatePort *int32 `json:"privatePort,omitempty"`
}

// PathMappingEntry routes a path prefix to a backend, as kcp-front-proxy's mapping file does.
type PathMappingEntry struct {
	// Path is the URL path prefix, starting with a slash.
	Path string `json:"path"`
	// Backend is the https URL requests are sent to.
	Backend string `json:"backend"`
	// BackendServerCA is the file path of the CA that verifies the backend.
	// +optional
	BackendServerCA string `json:"backend_server_ca,omitempty"`
	// ProxyClientCert is the file path of the client certificate toward the backend.
	// +optional
	ProxyClientCert string `json:"proxy_client_cert,omitempty"`
	// ProxyClientKey is the file path of the client key toward the backend.
	// +optional
	ProxyClientKey string `json:"proxy_client_key,omitempty"`
}

// FrontProxyStatus is the observed state of a FrontProxy.
type FrontProxyStatus struct {
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
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// FrontProxyList is a list of FrontProxies.
type FrontProxyList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FrontProxy `json:"items"`
}
