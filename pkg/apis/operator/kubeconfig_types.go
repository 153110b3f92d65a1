package operator

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Kubeconfig is a declared, renewable kcp credential kept in a Secret.
type Kubeconfig struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec is the desired state.
	Spec KubeconfigSpec
	// Status is the observed state.
	Status KubeconfigStatus
}

// KubeconfigSpec is the desired state of a Kubeconfig.
type KubeconfigSpec struct {
	// Target is the RootShard, Shard or FrontProxy the kubeconfig points at. Immutable.
	Target KubeconfigTarget
	// TargetWorkspace is the workspace path of the default context, root(:segment)*.
	// Defaults to root.
	TargetWorkspace string
	// Username is the common name of the client certificate.
	Username string
	// Groups are the organizations of the client certificate.
	Groups []string
	// Validity is the lifetime of the client certificate, at least 1h, the shortest that
	// cert-manager issues. cert-manager renews it before it expires and the Secret is
	// written again.
	Validity metav1.Duration
	// SecretRef names the Secret the kubeconfig is written to, under the key kubeconfig.
	SecretRef corev1.LocalObjectReference
	// CertificateTemplate customizes the client certificate.
	CertificateTemplate *CertificateTemplate
	// Authorization binds ClusterRoles in kcp to the group kubeconfig:<name>, which the
	// kubeconfig's certificate then carries. Setting or adding a role needs bind on it.
	Authorization *KubeconfigAuthorization
}

// KubeconfigAuthorization is what a Kubeconfig's identity is granted in kcp.
type KubeconfigAuthorization struct {
	// ClusterRoleBindings binds ClusterRoles in the target workspace.
	ClusterRoleBindings KubeconfigClusterRoleBindings
}

// KubeconfigClusterRoleBindings lists the ClusterRoles bound to a Kubeconfig's identity.
type KubeconfigClusterRoleBindings struct {
	// Cluster is the workspace to bind in. Deprecated: use spec.targetWorkspace.
	Cluster string
	// ClusterRoles are the names of the ClusterRoles to bind.
	ClusterRoles []string
}

// KubeconfigTarget names exactly one of a RootShard, a Shard or a FrontProxy.
type KubeconfigTarget struct {
	// RootShardRef names a RootShard.
	RootShardRef *corev1.LocalObjectReference
	// ShardRef names a Shard.
	ShardRef *corev1.LocalObjectReference
	// FrontProxyRef names a FrontProxy.
	FrontProxyRef *corev1.LocalObjectReference
	// RootShardSecretRef names a copy of a RootShard's generated <rootshard>-kubeconfig-issuer
	// Secret in the same namespace: the kubeconfig targets that RootShard, which may live in
	// another namespace or cluster, at its root shard URL.
	RootShardSecretRef *corev1.LocalObjectReference
	// RootShardLink names the bootstrap Secret of a Link declared on the RootShard's side:
	// the kubeconfig targets that RootShard, in another cluster, at its root shard URL, with
	// its credential signed over the link.
	RootShardLink *RootShardLink
}

// KubeconfigStatus is the observed state of a Kubeconfig.
type KubeconfigStatus struct {
	// Phase is Provisioning, Ready or Failed.
	Phase KubeconfigPhase
	// TargetName is the name of the target object.
	TargetName string
	// ExpirationTimestamp is the NotAfter of the current client certificate.
	ExpirationTimestamp *metav1.Time
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration int64
	// Authorization says where spec.authorization's ClusterRoleBindings were created.
	Authorization *KubeconfigAuthorizationStatus
	// Conditions are CertificatesReady and ReferenceValid.
	Conditions []metav1.Condition
	// Validity is the lifetime the client certificate is issued for.
	Validity *metav1.Duration
}

// KubeconfigAuthorizationStatus is where a Kubeconfig's ClusterRoleBindings are.
type KubeconfigAuthorizationStatus struct {
	// ProvisionedCluster is the workspace path or logical cluster the ClusterRoleBindings were
	// created in, so that they are found and removed there when the spec moves them or the
	// Kubeconfig is deleted.
	ProvisionedCluster string
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// KubeconfigList is a list of Kubeconfigs.
type KubeconfigList struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []Kubeconfig
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// KubeconfigRequest is the body of the kubeconfig subresource of RootShards, Shards and
// FrontProxies. It is never stored: the minted credential exists only in the response.
type KubeconfigRequest struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec is what is asked for.
	Spec KubeconfigRequestSpec
	// Status holds the minted kubeconfig.
	Status KubeconfigRequestStatus
}

// KubeconfigRequestSpec is what a kubeconfig request asks for.
type KubeconfigRequestSpec struct {
	// ExpirationSeconds is the requested lifetime, at least 600. Defaults to 3600. The server
	// shortens it to its maximum and says so in a warning.
	ExpirationSeconds *int64
	// Username is the identity to mint for. Defaults to the requester's; any other needs the
	// impersonate permission on it.
	Username string
	// Groups are the groups to mint for. Default to the requester's; any other needs the
	// impersonate permission on each.
	Groups []string
	// Workspace is the workspace path of the default context. Defaults to root.
	Workspace string
}

// KubeconfigRequestStatus holds the minted credential.
type KubeconfigRequestStatus struct {
	// Kubeconfig is a complete kubeconfig file.
	Kubeconfig string
	// ExpirationTimestamp is the certificate's NotAfter.
	ExpirationTimestamp metav1.Time
	// Certificate describes the minted client certificate.
	Certificate *CertificateInfo
}

// CertificateInfo describes a client certificate without its key.
type CertificateInfo struct {
	// SerialNumber in decimal.
	SerialNumber string
	// SHA256Fingerprint of the DER certificate, in hex.
	SHA256Fingerprint string
	// Subject in RFC 2253 form.
	Subject string
}
