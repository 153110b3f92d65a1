package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Link declares a remote consumer of a RootShard: a server in another cluster that may
// realize the consumer kinds it names (Shards, FrontProxies, Kubeconfigs) for the RootShard,
// authenticated by a client certificate that carries the declared identity. It lives in the
// RootShard's namespace; creating or changing one needs the right link on the RootShard.
type Link struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the declared remote consumer.
	Spec LinkSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	// Status is its observed state.
	Status LinkStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// LinkConsumerKind is a kind a linked remote may realize for the RootShard.
type LinkConsumerKind string

// The kinds a linked remote may realize.
const (
	LinkConsumerShard      LinkConsumerKind = "Shard"
	LinkConsumerFrontProxy LinkConsumerKind = "FrontProxy"
	LinkConsumerKubeconfig LinkConsumerKind = "Kubeconfig"
)

// LinkSpec is the desired state of a Link.
type LinkSpec struct {
	// RootShardRef names the RootShard of the namespace the remote joins. Immutable.
	RootShardRef corev1.LocalObjectReference `json:"rootShardRef" protobuf:"bytes,1,opt,name=rootShardRef"`
	// Identity is the DNS name the remote's client certificate carries as a subject
	// alternative name, and by which the RootShard knows it: a DNS-1123 subdomain, unique
	// among the Links of the RootShard. Immutable.
	Identity string `json:"identity" protobuf:"bytes,2,opt,name=identity"`
	// Consumers are the kinds the remote may realize for the RootShard: Shard, FrontProxy,
	// Kubeconfig; at least one.
	// +listType=set
	Consumers []LinkConsumerKind `json:"consumers" protobuf:"bytes,3,rep,name=consumers,casttype=LinkConsumerKind"`
	// CacheServerRef names a CacheServer of the namespace whose cache client the remote may
	// use too.
	CacheServerRef *corev1.LocalObjectReference `json:"cacheServerRef,omitempty" protobuf:"bytes,4,opt,name=cacheServerRef"`
	// DNSNames are the DNS names the remote's serving certificates may carry: each exact, or
	// a single leading "*." label.
	// +listType=set
	DNSNames []string `json:"dnsNames,omitempty" protobuf:"bytes,5,rep,name=dnsNames"`
}

// LinkStatus is the observed state of a Link.
type LinkStatus struct {
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,1,opt,name=observedGeneration"`
	// Conditions are Ready and the conditions it is made of.
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,2,rep,name=conditions"`
	// BootstrapSecretName is the Secret of the namespace that holds what the remote needs to
	// connect, once: the listener's address, its trust and the remote's client pair.
	BootstrapSecretName string `json:"bootstrapSecretName,omitempty" protobuf:"bytes,3,opt,name=bootstrapSecretName"`
	// Consumers are the remote's consumers, as it last reported them over the link; only the
	// server writes them.
	// +listType=map
	// +listMapKey=kind
	// +listMapKey=namespace
	// +listMapKey=name
	// +optional
	Consumers []LinkConsumerStatus `json:"consumers,omitempty" protobuf:"bytes,4,rep,name=consumers"`
}

// LinkConsumerStatus is a consumer in the remote cluster, as the remote reported it.
type LinkConsumerStatus struct {
	// Kind is the consumer's kind: Shard, FrontProxy, Kubeconfig, or CacheClient.
	Kind string `json:"kind" protobuf:"bytes,1,opt,name=kind"`
	// Namespace and Name are the consumer's, in the remote cluster.
	Namespace string `json:"namespace" protobuf:"bytes,2,opt,name=namespace"`
	Name      string `json:"name" protobuf:"bytes,3,opt,name=name"`
	// UID is the consumer's UID in the remote cluster.
	UID string `json:"uid" protobuf:"bytes,4,opt,name=uid"`
	// Generation is the consumer's metadata.generation the report is of.
	Generation int64 `json:"generation" protobuf:"varint,5,opt,name=generation"`
	// Sequence orders the remote's reports of the consumer; a report at or below it changes
	// nothing.
	Sequence int64 `json:"sequence" protobuf:"varint,6,opt,name=sequence"`
	// LastSeen is when the home last accepted a report of the consumer.
	LastSeen metav1.Time `json:"lastSeen" protobuf:"bytes,7,opt,name=lastSeen"`
	// Realized is whether the remote realized everything of the consumer.
	Realized bool `json:"realized" protobuf:"varint,8,opt,name=realized"`
	// Available is whether the consumer is available.
	Available bool `json:"available" protobuf:"varint,9,opt,name=available"`
	// Trust is, per CA, the fingerprints of the CA certificates its pods trust and serve from.
	// +listType=map
	// +listMapKey=ca
	// +optional
	Trust []LinkConsumerCA `json:"trust,omitempty" protobuf:"bytes,10,rep,name=trust"`
	// KcpShard and BaseURL are the kcp shard a Shard registered and its base URL.
	// +optional
	KcpShard string `json:"kcpShard,omitempty" protobuf:"bytes,11,opt,name=kcpShard"`
	// +optional
	BaseURL string `json:"baseURL,omitempty" protobuf:"bytes,12,opt,name=baseURL"`
}

// LinkConsumerCA is a consumer's trust of one of its CAs, by the SHA-256 fingerprints of the
// CA certificates.
type LinkConsumerCA struct {
	// CA is the CA's role, as in the rotation subresource (server, client, ...).
	CA string `json:"ca" protobuf:"bytes,1,opt,name=ca"`
	// Trusted are the CAs its pods trust.
	// +listType=set
	// +optional
	Trusted []string `json:"trusted,omitempty" protobuf:"bytes,2,rep,name=trusted"`
	// Served are the CAs its serving certificates chain to, where it serves from this CA.
	// +listType=set
	// +optional
	Served []string `json:"served,omitempty" protobuf:"bytes,3,rep,name=served"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// LinkList is a list of Links.
type LinkList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items           []Link `json:"items" protobuf:"bytes,2,rep,name=items"`
}
