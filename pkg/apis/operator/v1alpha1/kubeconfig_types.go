package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Kubeconfig is a declared, renewable kcp credential kept in a Secret.
type Kubeconfig struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the desired state.
	// +optional
	Spec KubeconfigSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	// Status is the observed state.
	// +optional
	Status KubeconfigStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// KubeconfigSpec is the desired state of a Kubeconfig.
type KubeconfigSpec struct {
	// Target is the RootShard, Shard or FrontProxy the kubeconfig points at. Immutable.
	Target KubeconfigTarget `json:"target" protobuf:"bytes,1,opt,name=target"`
	// TargetWorkspace is the workspace path of the default context, root(:segment)*.
	// Defaults to root.
	// +optional
	TargetWorkspace string `json:"targetWorkspace,omitempty" protobuf:"bytes,2,opt,name=targetWorkspace"`
	// Username is the common name of the client certificate.
	Username string `json:"username" protobuf:"bytes,3,opt,name=username"`
	// Groups are the organizations of the client certificate.
	// +optional
	// +listType=atomic
	Groups []string `json:"groups,omitempty" protobuf:"bytes,4,rep,name=groups"`
	// Validity is the lifetime of the client certificate, at least 1h, the shortest that
	// cert-manager issues. cert-manager renews it before it expires and the Secret is
	// written again.
	Validity metav1.Duration `json:"validity" protobuf:"bytes,5,opt,name=validity"`
	// SecretRef names the Secret the kubeconfig is written to, under the key kubeconfig.
	SecretRef corev1.LocalObjectReference `json:"secretRef" protobuf:"bytes,6,opt,name=secretRef"`
	// CertificateTemplate customizes the client certificate.
	// +optional
	CertificateTemplate *CertificateTemplate `json:"certificateTemplate,omitempty" protobuf:"bytes,7,opt,name=certificateTemplate"`
	// Authorization binds ClusterRoles in kcp to the group kubeconfig:<name>, which the
	// kubeconfig's certificate then carries. Setting or adding a role needs bind on it.
	Authorization *KubeconfigAuthorization `json:"authorization,omitempty" protobuf:"bytes,8,opt,name=authorization"`
}

// KubeconfigAuthorization is what a Kubeconfig's identity is granted in kcp.
type KubeconfigAuthorization struct {
	// ClusterRoleBindings binds ClusterRoles in the target workspace.
	ClusterRoleBindings KubeconfigClusterRoleBindings `json:"clusterRoleBindings" protobuf:"bytes,1,opt,name=clusterRoleBindings"`
}

// KubeconfigClusterRoleBindings lists the ClusterRoles bound to a Kubeconfig's identity.
type KubeconfigClusterRoleBindings struct {
	// Cluster is the workspace to bind in. Deprecated: use spec.targetWorkspace.
	Cluster string `json:"cluster,omitempty" protobuf:"bytes,1,opt,name=cluster"`
	// ClusterRoles are the names of the ClusterRoles to bind.
	// +listType=atomic
	ClusterRoles []string `json:"clusterRoles" protobuf:"bytes,2,rep,name=clusterRoles"`
}

// KubeconfigTarget names exactly one of a RootShard, a Shard or a FrontProxy.
type KubeconfigTarget struct {
	// RootShardRef names a RootShard.
	// +optional
	RootShardRef *corev1.LocalObjectReference `json:"rootShardRef,omitempty" protobuf:"bytes,1,opt,name=rootShardRef"`
	// ShardRef names a Shard.
	// +optional
	ShardRef *corev1.LocalObjectReference `json:"shardRef,omitempty" protobuf:"bytes,2,opt,name=shardRef"`
	// FrontProxyRef names a FrontProxy.
	// +optional
	FrontProxyRef *corev1.LocalObjectReference `json:"frontProxyRef,omitempty" protobuf:"bytes,3,opt,name=frontProxyRef"`
	// RootShardSecretRef names a copy of a RootShard's generated <rootshard>-kubeconfig-issuer
	// Secret in the same namespace: the kubeconfig targets that RootShard, which may live in
	// another namespace or cluster, at its root shard URL.
	// +optional
	RootShardSecretRef *corev1.LocalObjectReference `json:"rootShardSecretRef,omitempty" protobuf:"bytes,4,opt,name=rootShardSecretRef"`
	// RootShardLink names the bootstrap Secret of a Link declared on the RootShard's side:
	// the kubeconfig targets that RootShard, in another cluster, at its root shard URL, with
	// its credential signed over the link.
	// +optional
	RootShardLink *RootShardLink `json:"rootShardLink,omitempty" protobuf:"bytes,5,opt,name=rootShardLink"`
}

// KubeconfigStatus is the observed state of a Kubeconfig.
type KubeconfigStatus struct {
	// Phase is Provisioning, Ready or Failed.
	// +optional
	Phase KubeconfigPhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=KubeconfigPhase"`
	// TargetName is the name of the target object.
	// +optional
	TargetName string `json:"targetName,omitempty" protobuf:"bytes,2,opt,name=targetName"`
	// ExpirationTimestamp is the NotAfter of the current client certificate.
	// +optional
	ExpirationTimestamp *metav1.Time `json:"expirationTimestamp,omitempty" protobuf:"bytes,3,opt,name=expirationTimestamp"`
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,4,opt,name=observedGeneration"`
	// Authorization says where spec.authorization's ClusterRoleBindings were created.
	// +optional
	Authorization *KubeconfigAuthorizationStatus `json:"authorization,omitempty" protobuf:"bytes,5,opt,name=authorization"`
	// Conditions are CertificatesReady and ReferenceValid.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,6,rep,name=conditions"`
	// Validity is the lifetime the client certificate is issued for: spec.validity, or the
	// server's maximum (--max-kubeconfig-validity) when spec.validity is longer.
	// +optional
	Validity *metav1.Duration `json:"validity,omitempty" protobuf:"bytes,7,opt,name=validity"`
}

// KubeconfigAuthorizationStatus is where a Kubeconfig's ClusterRoleBindings are.
type KubeconfigAuthorizationStatus struct {
	// ProvisionedCluster is the workspace path or logical cluster the ClusterRoleBindings were
	// created in, so that they are found and removed there when the spec moves them or the
	// Kubeconfig is deleted.
	ProvisionedCluster string `json:"provisionedCluster" protobuf:"bytes,1,opt,name=provisionedCluster"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// KubeconfigList is a list of Kubeconfigs.
type KubeconfigList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items           []Kubeconfig `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// KubeconfigRequest is the body of the kubeconfig subresource of RootShards, Shards and
// FrontProxies. It is never stored: the minted credential exists only in the response.
type KubeconfigRequest struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is what is asked for.
	// +optional
	Spec KubeconfigRequestSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	// Status holds the minted kubeconfig.
	// +optional
	Status KubeconfigRequestStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// KubeconfigRequestSpec is what a kubeconfig request asks for.
type KubeconfigRequestSpec struct {
	// ExpirationSeconds is the requested lifetime, at least 600. Defaults to 3600. The server
	// shortens it to its maximum and says so in a warning.
	// +optional
	ExpirationSeconds *int64 `json:"expirationSeconds,omitempty" protobuf:"varint,1,opt,name=expirationSeconds"`
	// Username is the identity to mint for. Defaults to the requester's; any other needs the
	// impersonate permission on it.
	// +optional
	Username string `json:"username,omitempty" protobuf:"bytes,2,opt,name=username"`
	// Groups are the groups to mint for. Default to the requester's; any other needs the
	// impersonate permission on each.
	// +optional
	// +listType=atomic
	Groups []string `json:"groups,omitempty" protobuf:"bytes,3,rep,name=groups"`
	// Workspace is the workspace path of the default context. Defaults to root.
	// +optional
	Workspace string `json:"workspace,omitempty" protobuf:"bytes,4,opt,name=workspace"`
}

// KubeconfigRequestStatus holds the minted credential.
type KubeconfigRequestStatus struct {
	// Kubeconfig is a complete kubeconfig file.
	// +optional
	Kubeconfig string `json:"kubeconfig,omitempty" protobuf:"bytes,1,opt,name=kubeconfig"`
	// ExpirationTimestamp is the certificate's NotAfter.
	// +optional
	ExpirationTimestamp metav1.Time `json:"expirationTimestamp,omitempty" protobuf:"bytes,2,opt,name=expirationTimestamp"`
	// Certificate describes the minted client certificate.
	// +optional
	Certificate *CertificateInfo `json:"certificate,omitempty" protobuf:"bytes,3,opt,name=certificate"`
}

// CertificateInfo describes a client certificate without its key.
type CertificateInfo struct {
	// SerialNumber in decimal.
	SerialNumber string `json:"serialNumber" protobuf:"bytes,1,opt,name=serialNumber"`
	// SHA256Fingerprint of the DER certificate, in hex.
	SHA256Fingerprint string `json:"sha256Fingerprint" protobuf:"bytes,2,opt,name=sha256Fingerprint"`
	// Subject in RFC 2253 form.
	Subject string `json:"subject" protobuf:"bytes,3,opt,name=subject"`
}
