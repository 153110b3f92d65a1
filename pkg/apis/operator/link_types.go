package operator

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Link declares a remote consumer of a RootShard.
type Link struct {
	metav1.TypeMeta
	// Standard object metadata.
	metav1.ObjectMeta

	// Spec is the declared remote consumer.
	Spec LinkSpec
	// Status is its observed state.
	Status LinkStatus
}

// LinkConsumerKind is a kind a linked remote may realize for the RootShard.
type LinkConsumerKind string

// The kinds a linked remote may realize.
const (
	LinkConsumerShard      LinkConsumerKind = "Shard"
	LinkConsumerFrontProxy LinkConsumerKind = "FrontProxy"
	LinkConsumerKubeconfig LinkConsumerKind = "Kubeconfig"
)

// LinkConsumerKinds are every kind a linked remote may realize, in the order 422s list them.
var LinkConsumerKinds = []LinkConsumerKind{LinkConsumerShard, LinkConsumerFrontProxy, LinkConsumerKubeconfig}

// LinkSpec is the desired state of a Link.
type LinkSpec struct {
	// RootShardRef names the RootShard of the namespace the remote joins. Immutable.
	RootShardRef corev1.LocalObjectReference
	// Identity is the DNS name the remote's client certificate carries. Immutable.
	Identity string
	// Consumers are the kinds the remote may realize for the RootShard.
	Consumers []LinkConsumerKind
	// CacheServerRef names a CacheServer whose cache client the remote may use too.
	CacheServerRef *corev1.LocalObjectReference
	// DNSNames are the DNS names the remote's serving certificates may carry.
	DNSNames []string
}

// LinkStatus is the observed state of a Link.
type LinkStatus struct {
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration int64
	// Conditions are Ready and the conditions it is made of.
	Conditions []metav1.Condition
	// BootstrapSecretName is the Secret that holds what the remote needs to connect.
	BootstrapSecretName string
	// Consumers are the remote's consumers, as it last reported them; only the server writes
	// them.
	Consumers []LinkConsumerStatus
}

// LinkConsumerStatus is a consumer in the remote cluster, as the remote reported it.
type LinkConsumerStatus struct {
	// Kind is the consumer's kind: Shard, FrontProxy, Kubeconfig, or CacheClient.
	Kind string
	// Namespace, Name and UID are the consumer's, in the remote cluster.
	Namespace, Name, UID string
	// Generation is the consumer's metadata.generation the report is of.
	Generation int64
	// Sequence orders the remote's reports of the consumer.
	Sequence int64
	// LastSeen is when the home last accepted a report of the consumer.
	LastSeen metav1.Time
	// Realized and Available are the consumer's state.
	Realized, Available bool
	// Trust is, per CA, the fingerprints of the CA certificates its pods trust and serve from.
	Trust []LinkConsumerCA
	// KcpShard and BaseURL are the kcp shard a Shard registered and its base URL.
	KcpShard, BaseURL string
}

// LinkConsumerCA is a consumer's trust of one of its CAs.
type LinkConsumerCA struct {
	// CA is the CA's role.
	CA string
	// Trusted are the fingerprints of the CAs its pods trust.
	Trusted []string
	// Served are the fingerprints of the CAs its serving certificates chain to.
	Served []string
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// LinkList is a list of Links.
type LinkList struct {
	metav1.TypeMeta
	// Standard list metadata.
	metav1.ListMeta
	Items []Link
}
