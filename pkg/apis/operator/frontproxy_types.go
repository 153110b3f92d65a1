package operator

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// FrontProxy is a kcp-front-proxy in front of a RootShard and its Shards.
type FrontProxy struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec is the desired state.
	Spec FrontProxySpec
	// Status is the observed state.
	Status FrontProxyStatus
}

// FrontProxySpec is the desired state of a FrontProxy.
type FrontProxySpec struct {
	ComponentSpec

	// RootShard is the RootShard this front proxy serves. Immutable.
	RootShard RootShardConfig
	// External is the front proxy's own external address. Without it, the RootShard's is used.
	External *FrontProxyExternalConfig
	// ExternalHostname is the front proxy's external hostname. Deprecated: use
	// external.hostname. Accepted with a warning; not together with external.hostname.
	ExternalHostname string
	// Auth configures authentication.
	Auth *AuthSpec
	// AdditionalPathMappings are routed after the built-in /clusters/ and /services/ mappings.
	AdditionalPathMappings []PathMappingEntry
	// CABundleSecretRef names a Secret whose tls.crt is added to the server CA bundle.
	CABundleSecretRef *corev1.LocalObjectReference
	// ClientCABundleRef names a Secret whose tls.crt is added to the client CA bundle.
	ClientCABundleRef *corev1.LocalObjectReference
}

// FrontProxyExternalConfig is the external address of a front proxy.
type FrontProxyExternalConfig struct {
	// Hostname under which the front proxy is reached.
	Hostname string
	// Port of the front proxy's Service. Defaults to the RootShard's external port.
	Port int32
	// PrivateHostname is the hostname under which components inside the cluster reach the
	// front proxy instead of hostname. It is added to the serving certificate.
	PrivateHostname string
	// PrivatePort is the port that goes with privateHostname. Defaults to port.
	PrivatePort *int32
}

// PathMappingEntry routes a path prefix to a backend, as kcp-front-proxy's mapping file does.
type PathMappingEntry struct {
	// Path is the URL path prefix, starting with a slash.
	Path string
	// Backend is the https URL requests are sent to; empty with VirtualWorkspaceRef.
	Backend string
	// BackendServerCA is the file path of the CA that verifies the backend.
	BackendServerCA string
	// ProxyClientCert is the file path of the client certificate toward the backend.
	ProxyClientCert string
	// ProxyClientKey is the file path of the client key toward the backend.
	ProxyClientKey string
	// VirtualWorkspaceRef names a VirtualWorkspace of the FrontProxy's namespace that serves
	// its RootShard or one of its Shards: the path goes to its Service with the proxy's
	// request-header identity. With it, the four fields above but Path are empty.
	VirtualWorkspaceRef *corev1.LocalObjectReference
}

// FrontProxyStatus is the observed state of a FrontProxy.
type FrontProxyStatus struct {
	// Phase is Provisioning, Running or Deleting.
	Phase Phase
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration int64
	// Conditions are Available, CertificatesReady and ReferenceValid.
	Conditions []metav1.Condition
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// FrontProxyList is a list of FrontProxies.
type FrontProxyList struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []FrontProxy
}
