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
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the desired state.
	// +optional
	Spec FrontProxySpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	// Status is the observed state.
	// +optional
	Status FrontProxyStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// FrontProxySpec is the desired state of a FrontProxy.
type FrontProxySpec struct {
	ComponentSpec `json:",inline" protobuf:"bytes,1,opt,name=componentSpec"`

	// RootShard is the RootShard this front proxy serves. Immutable.
	RootShard RootShardConfig `json:"rootShard" protobuf:"bytes,2,opt,name=rootShard"`
	// External is the front proxy's own external address. Without it, the RootShard's is used.
	// +optional
	External *FrontProxyExternalConfig `json:"external,omitempty" protobuf:"bytes,3,opt,name=external"`
	// ExternalHostname is the front proxy's external hostname. Deprecated: use
	// external.hostname. Accepted with a warning; not together with external.hostname.
	ExternalHostname string `json:"externalHostname,omitempty" protobuf:"bytes,4,opt,name=externalHostname"`
	// Auth configures authentication.
	// +optional
	Auth *AuthSpec `json:"auth,omitempty" protobuf:"bytes,5,opt,name=auth"`
	// AdditionalPathMappings are routed after the built-in /clusters/ and /services/ mappings.
	// +optional
	// +listType=atomic
	AdditionalPathMappings []PathMappingEntry `json:"additionalPathMappings,omitempty" protobuf:"bytes,6,rep,name=additionalPathMappings"`
	// CABundleSecretRef names a Secret whose tls.crt is added to the server CA bundle.
	// +optional
	CABundleSecretRef *corev1.LocalObjectReference `json:"caBundleSecretRef,omitempty" protobuf:"bytes,7,opt,name=caBundleSecretRef"`
	// ClientCABundleRef names a Secret whose tls.crt is added to the client CA bundle.
	// +optional
	ClientCABundleRef *corev1.LocalObjectReference `json:"clientCABundleRef,omitempty" protobuf:"bytes,8,opt,name=clientCABundleRef"`
}

// FrontProxyExternalConfig is the external address of a front proxy.
type FrontProxyExternalConfig struct {
	// Hostname under which the front proxy is reached.
	// +optional
	Hostname string `json:"hostname,omitempty" protobuf:"bytes,1,opt,name=hostname"`
	// Port of the front proxy's Service. Defaults to the RootShard's external port.
	// +optional
	Port int32 `json:"port,omitempty" protobuf:"varint,2,opt,name=port"`
	// PrivateHostname is the hostname under which components inside the cluster reach the
	// front proxy instead of hostname. It is added to the serving certificate.
	PrivateHostname string `json:"privateHostname,omitempty" protobuf:"bytes,3,opt,name=privateHostname"`
	// PrivatePort is the port that goes with privateHostname. Defaults to port.
	PrivatePort *int32 `json:"privatePort,omitempty" protobuf:"varint,4,opt,name=privatePort"`
}

// PathMappingEntry routes a path prefix to a backend, as kcp-front-proxy's mapping file does.
type PathMappingEntry struct {
	// Path is the URL path prefix, starting with a slash.
	Path string `json:"path" protobuf:"bytes,1,opt,name=path"`
	// Backend is the https URL requests are sent to. Required without virtualWorkspaceRef,
	// empty with it.
	// +optional
	Backend string `json:"backend,omitempty" protobuf:"bytes,2,opt,name=backend"`
	// BackendServerCA is the file path of the CA that verifies the backend.
	// +optional
	BackendServerCA string `json:"backend_server_ca,omitempty" protobuf:"bytes,3,opt,name=backend_server_ca,json=backendServerCa"`
	// ProxyClientCert is the file path of the client certificate toward the backend.
	// +optional
	ProxyClientCert string `json:"proxy_client_cert,omitempty" protobuf:"bytes,4,opt,name=proxy_client_cert,json=proxyClientCert"`
	// ProxyClientKey is the file path of the client key toward the backend.
	// +optional
	ProxyClientKey string `json:"proxy_client_key,omitempty" protobuf:"bytes,5,opt,name=proxy_client_key,json=proxyClientKey"`
	// VirtualWorkspaceRef names a VirtualWorkspace of the FrontProxy's namespace that serves
	// the FrontProxy's RootShard or one of its Shards: the path goes to its Service, verified
	// by the proxy's server CA, with the proxy's request-header identity (the caller's user
	// and groups), as the built-in /services/ mapping does. With it, backend,
	// backend_server_ca, proxy_client_cert and proxy_client_key are empty. Needs use on the
	// VirtualWorkspace.
	// +optional
	VirtualWorkspaceRef *corev1.LocalObjectReference `json:"virtualWorkspaceRef,omitempty" protobuf:"bytes,6,opt,name=virtualWorkspaceRef"`
}

// FrontProxyStatus is the observed state of a FrontProxy.
type FrontProxyStatus struct {
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
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// FrontProxyList is a list of FrontProxies.
type FrontProxyList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items           []FrontProxy `json:"items" protobuf:"bytes,2,rep,name=items"`
}
