package operator

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ImageSpec selects the container image of a component.
type ImageSpec struct {
	// Repository is the image repository. Defaults to ghcr.io/kcp-dev/kcp. Another repository
	// runs code of the author's choice, so it needs create on deployments.apps in the namespace.
	Repository string
	// Tag is the image tag. Defaults to the kcp release this server was built for.
	Tag string
	// ImagePullSecrets are Secrets in the same namespace used to pull the image.
	ImagePullSecrets []corev1.LocalObjectReference
}

// RootShardConfig points at the RootShard an object belongs to.
type RootShardConfig struct {
	// Reference names a RootShard in the same namespace.
	Reference *corev1.LocalObjectReference
	// SecretRef names a copy of a RootShard's generated join Secret (<rootshard>-shard-join
	// for a Shard, <rootshard>-front-proxy-join for a FrontProxy) in the same namespace: the
	// RootShard may live in another namespace or cluster.
	SecretRef *corev1.LocalObjectReference
	// Link names the bootstrap Secret of a Link declared on the RootShard's side, in the
	// same namespace: the RootShard lives in another cluster, and the two servers keep the
	// object current over the link, with no CA key in this cluster. Exactly one of
	// Reference, SecretRef and Link is set.
	Link *RootShardLink
}

// RootShardLink joins a RootShard of another cluster through a link (docs/links.md).
type RootShardLink struct {
	// SecretRef names the bootstrap Secret (<link>-link-bootstrap, carried once from the
	// RootShard's cluster) in the same namespace.
	SecretRef corev1.LocalObjectReference
}

// CacheConfig points at the CacheServer a shard uses.
type CacheConfig struct {
	// Reference names a CacheServer in the same namespace.
	Reference *corev1.LocalObjectReference
	// SecretRef names a copy of a CacheServer's generated <cacheserver>-cache-client Secret
	// in the same namespace: the CacheServer may live in another namespace or cluster. At
	// most one of Reference, SecretRef and Link is set.
	SecretRef *corev1.LocalObjectReference
	// Link names the bootstrap Secret of a Link whose cacheServerRef names the CacheServer,
	// in the same namespace: its cache client is signed over the link, no key leaves the
	// home. A Shard only.
	Link *RootShardLink
	// Embedded is kcp-operator's switch for the root shard's embedded cache. Deprecated: the
	// embedded cache is used exactly when no ref is given. Accepted with a warning.
	Embedded *EmbeddedCacheConfiguration
}

// EmbeddedCacheConfiguration is the deprecated embedded-cache switch of a RootShard.
type EmbeddedCacheConfiguration struct {
	// Enabled must not be false together with a missing ref: a RootShard always has a cache.
	Enabled bool
}

// EtcdConfig configures the etcd cluster a component stores its data in.
type EtcdConfig struct {
	// Endpoints are the etcd client URLs of an etcd cluster run elsewhere. Exactly one of
	// Endpoints and Managed is set.
	Endpoints []string
	// TLSConfig configures client TLS toward an etcd given by Endpoints.
	TLSConfig *EtcdTLSConfig
	// Prefix is the key prefix under which objects are stored. It must start with a slash.
	Prefix string
	// Managed runs an etcd cluster for the shard as a StatefulSet next to it.
	Managed *ManagedEtcd
}

// ManagedEtcd is an etcd cluster the server runs for a shard.
type ManagedEtcd struct {
	// Replicas is the number of etcd members: 1, 3 or 5. Immutable for now.
	Replicas *int32
	// Storage is each member's persistent volume. Immutable.
	Storage *EtcdStorage
	// Image selects the etcd image.
	Image *ImageSpec
	// Resources are the etcd container's compute resources.
	Resources *corev1.ResourceRequirements
	// Template customizes the etcd StatefulSet and its pods.
	Template *DeploymentTemplate
	// Quota is etcd's backend quota (--quota-backend-bytes).
	Quota *resource.Quantity
	// Defragmentation says when the server defragments a member.
	Defragmentation *EtcdDefragmentation
	// Backup takes snapshots on a schedule and on demand into a store.
	Backup *EtcdBackup
	// Restore starts the cluster from a snapshot, when none of its members has data yet.
	Restore *EtcdRestore
}

// EtcdDefragmentation says when a managed etcd's members are defragmented.
type EtcdDefragmentation struct {
	// ThresholdPercent is the share of a member's database file not in use from which it is
	// defragmented.
	ThresholdPercent *int32
	// MinimumSize is the database size below which a member is never defragmented for its
	// fragmentation.
	MinimumSize *resource.Quantity
}

// ManagedEtcdStatus is what the server observes of a managed etcd.
type ManagedEtcdStatus struct {
	// Members are the members as etcd reports them, by name.
	Members []EtcdMemberStatus
	// Snapshots are the snapshots of this etcd its store keeps, newest first.
	Snapshots []EtcdSnapshotInfo
	// LastScheduleTime is when the schedule last took a snapshot.
	LastScheduleTime *metav1.Time
	// PendingSnapshot is the snapshot the backup subresource asked for that the server has
	// not taken yet.
	PendingSnapshot *EtcdPendingSnapshot
}

// EtcdMemberStatus is one member of a managed etcd, as its own maintenance status says.
type EtcdMemberStatus struct {
	// Name is the member's pod name.
	Name string
	// DatabaseSize is the size of the member's database file, in bytes.
	DatabaseSize int64
	// DatabaseSizeInUse is the part of the database file in use, in bytes.
	DatabaseSizeInUse int64
	// Leader says whether the member is the cluster's leader.
	Leader bool
	// Alarms are the alarms raised on the member: NOSPACE or CORRUPT.
	Alarms []string
	// LastDefragmentationTime is when the server last defragmented the member.
	LastDefragmentationTime *metav1.Time
	// Error is why the member did not answer the last time it was asked.
	Error string
}

// EtcdStorage is the persistent volume of each etcd member.
type EtcdStorage struct {
	// VolumeSize is the requested size of each member's volume.
	VolumeSize *resource.Quantity
	// StorageClassName is the StorageClass of the volumes; the cluster's default when nil.
	StorageClassName *string
}

// EtcdTLSConfig names the Secret with the client certificate for etcd.
type EtcdTLSConfig struct {
	// SecretRef names a Secret holding tls.crt, tls.key and ca.crt.
	SecretRef corev1.LocalObjectReference
}

// ExternalConfig is how a kcp instance is reached from outside the cluster.
type ExternalConfig struct {
	// Hostname is the external name of the kcp instance, matched by a DNS record that points
	// at the front proxy.
	Hostname string
	// Port is the external port. Defaults to 6443.
	Port int32
	// PrivateHostname is the name internal components use instead of hostname.
	PrivateHostname string
	// PrivatePort is the port internal components use instead of port.
	PrivatePort *int32
}

// ObjectReference names an object by name, kind and group.
type ObjectReference struct {
	// Name of the object.
	Name string
	// Kind of the object: Issuer or ClusterIssuer. Defaults to Issuer.
	Kind string
	// Group of the object. Defaults to cert-manager.io.
	Group string
}

// Certificates configures where the root CA of a setup comes from. Exactly one of issuerRef
// and caSecretRef is set. When the whole field is absent, the namespace bootstrap PKI is used.
type Certificates struct {
	// IssuerRef is a cert-manager Issuer or ClusterIssuer that signs the setup's root CA. Setting
	// it needs create on certificates.cert-manager.io in the namespace.
	IssuerRef *ObjectReference
	// CASecretRef is a Secret with a CA certificate and key (tls.crt, tls.key) that signs the
	// setup's certificates. Setting it needs get on that Secret.
	CASecretRef *corev1.LocalObjectReference
}

// WithoutEmptyCertificates is certs, or nil when it names no source: kcp-operator's Go SDK
// sends "certificates: {}" for a RootShard or CacheServer whose user set neither field (the
// field has no omitempty there), and it is stored as unset: the namespace bootstrap PKI
// issues the root CA.
func WithoutEmptyCertificates(certs *Certificates) *Certificates {
	if certs != nil && certs.IssuerRef == nil && certs.CASecretRef == nil {
		return nil
	}
	return certs
}

// CertificateTemplateMap customizes generated Certificates, keyed by certificate role
// (server, client, requestheader, kubeconfig, service-account, logical-cluster-admin, ...) or
// by <role>-ca for a CA.
type CertificateTemplateMap map[string]CertificateTemplate

// CertificateTemplate is merged into a generated cert-manager Certificate.
type CertificateTemplate struct {
	// Metadata is merged into the Certificate's metadata.
	Metadata *MetadataTemplate
	// Spec is merged into the Certificate's spec.
	Spec *CertificateSpecTemplate
}

// MetadataTemplate holds labels and annotations copied onto a generated object.
type MetadataTemplate struct {
	// Labels are copied onto the object.
	Labels map[string]string
	// Annotations are copied onto the object.
	Annotations map[string]string
}

// CertificateSpecTemplate is the part of a cert-manager Certificate spec that may be customized.
type CertificateSpecTemplate struct {
	// Subject holds X.509 subject attributes.
	Subject *X509Subject
	// DNSNames are added to the generated DNS subject alternative names.
	DNSNames []string
	// IPAddresses are added to the generated IP subject alternative names.
	IPAddresses []string
	// Duration is the requested lifetime, at least 1h.
	Duration *metav1.Duration
	// RenewBefore is how long before expiry the certificate is renewed, at least 5m and
	// shorter than the duration.
	RenewBefore *metav1.Duration
	// PrivateKey sets the key algorithm, size, encoding and rotation policy.
	PrivateKey *CertificatePrivateKeyTemplate
	// SecretTemplate holds labels and annotations copied onto the certificate's Secret.
	SecretTemplate *MetadataTemplate
	// IssuerRef issues this one certificate from another cert-manager Issuer or ClusterIssuer,
	// for example a public ACME issuer for the front proxy. With it, dnsNames and ipAddresses
	// replace the generated subject alternative names instead of adding to them.
	IssuerRef *ObjectReference
}

// X509Subject holds X.509 subject attributes other than the common name.
type X509Subject struct {
	Organizations       []string
	Countries           []string
	OrganizationalUnits []string
	Localities          []string
	Provinces           []string
	StreetAddresses     []string
	PostalCodes         []string
	SerialNumber        string
}

// CertificatePrivateKeyTemplate sets the private key of a generated certificate.
type CertificatePrivateKeyTemplate struct {
	// RotationPolicy is Never or Always.
	RotationPolicy string
	// Encoding is PKCS1 or PKCS8.
	Encoding string
	// Algorithm is RSA, ECDSA or Ed25519. Certificates default to ECDSA P-256.
	Algorithm string
	// KeySize is the key size: 2048, 4096 or 8192 for RSA; 256, 384 or 521 for ECDSA.
	KeySize int32
}

// DeploymentTemplate customizes a generated Deployment.
type DeploymentTemplate struct {
	// Metadata is merged into the Deployment's metadata.
	Metadata *MetadataTemplate
	// Spec is merged into the Deployment's spec.
	Spec *DeploymentSpecTemplate
}

// DeploymentSpecTemplate customizes a generated Deployment's spec.
type DeploymentSpecTemplate struct {
	// Template customizes the pods.
	Template *PodTemplateSpec
}

// PodTemplateSpec customizes the pods of a generated Deployment.
type PodTemplateSpec struct {
	// Metadata is merged into the pods' metadata.
	Metadata *MetadataTemplate
	// Spec is merged into the pods' spec.
	Spec *PodSpecTemplate
}

// PodSpecTemplate is the part of a pod spec that may be customized.
type PodSpecTemplate struct {
	// NodeSelector must match a node's labels for the pod to be scheduled there.
	NodeSelector map[string]string
	// Affinity holds the pod's scheduling constraints.
	Affinity *corev1.Affinity
	// Tolerations of the pod. Each names the taint it tolerates.
	Tolerations []corev1.Toleration
	// HostAliases are added to the pod's hosts file.
	HostAliases []corev1.HostAlias
	// ImagePullSecrets are used to pull the pod's images.
	ImagePullSecrets []corev1.LocalObjectReference
	// TopologySpreadConstraints spread the pods across topology domains.
	TopologySpreadConstraints []corev1.TopologySpreadConstraint
}

// ServiceTemplate customizes a generated Service.
type ServiceTemplate struct {
	// Metadata is merged into the Service's metadata.
	Metadata *MetadataTemplate
	// Spec is merged into the Service's spec.
	Spec *ServiceSpecTemplate
}

// ServiceSpecTemplate is the part of a Service spec that may be customized.
type ServiceSpecTemplate struct {
	// Type is ClusterIP, NodePort or LoadBalancer. NodePort and LoadBalancer need create on
	// services in the namespace.
	Type corev1.ServiceType
	// ClusterIP is an IP address or None.
	ClusterIP string
}

// LocalDataKeyReference names a key in a Secret or ConfigMap of the same namespace.
type LocalDataKeyReference struct {
	// Name of the Secret or ConfigMap.
	Name string
	// Key in its data.
	Key string
}

// LoggingSpec configures a component's logging.
type LoggingSpec struct {
	// Level is the klog verbosity, from 0 to 10.
	Level int32
}

// AuthSpec configures authentication of a kcp component.
type AuthSpec struct {
	// OIDC configures OpenID Connect authentication.
	OIDC *OIDCConfiguration
	// ServiceAccount configures kcp service account authentication.
	ServiceAccount *ServiceAccountAuthentication
	// Webhook configures token authentication by a webhook.
	Webhook *AuthWebhookSpec
	// TokenAuthFile configures static token authentication from a Secret.
	TokenAuthFile *TokenAuthFileSpec
	// DropGroups are removed from requests before they reach the shards.
	DropGroups []string
	// PassOnGroups are the only groups passed on to the shards.
	PassOnGroups []string
}

// OIDCConfiguration configures OpenID Connect authentication.
type OIDCConfiguration struct {
	// IssuerURL is the https URL of the OIDC issuer.
	IssuerURL string
	// ClientID is the client ID configured at the issuer.
	ClientID string
	// GroupsClaim is the claim that holds the groups.
	GroupsClaim string
	// UsernameClaim is the claim that holds the username. Defaults to sub in kcp.
	UsernameClaim string
	// GroupsPrefix is put before every group.
	GroupsPrefix string
	// UsernamePrefix is put before the username.
	UsernamePrefix string
	// CAFileRef names a key of a Secret with the CA bundle that verifies the issuer.
	CAFileRef *LocalDataKeyReference
	// ClientSecret is kcp-operator's OIDC client secret. Deprecated: kube's OIDC
	// authentication needs no secret. Accepted with a warning and never passed to kcp.
	ClientSecret string
}

// AuthWebhookSpec configures token authentication by a webhook.
type AuthWebhookSpec struct {
	// ConfigSecretName names a Secret whose key kubeconfig is the webhook's kubeconfig file.
	ConfigSecretName string
	// CacheAuthenticationTTL is how long webhook answers are cached.
	CacheAuthenticationTTL *metav1.Duration
	// Version is the TokenReview version the webhook speaks: v1 or v1beta1.
	Version string
}

// TokenAuthFileSpec names a Secret key holding a static token file.
type TokenAuthFileSpec struct {
	// SecretName names the Secret.
	SecretName string
	// Key is the Secret's key that holds the token file. Defaults to token.csv.
	Key string
}

// ServiceAccountAuthentication configures kcp service account authentication.
type ServiceAccountAuthentication struct {
	// Enabled turns service account authentication on.
	Enabled bool
}

// AuditSpec configures auditing of a shard.
type AuditSpec struct {
	// Policy is the audit policy.
	Policy *AuditPolicySpec
	// Webhook sends audit events to a webhook.
	Webhook *AuditWebhookSpec
}

// AuditPolicySpec names the ConfigMap key that holds an audit policy file.
type AuditPolicySpec struct {
	// ConfigMap names a ConfigMap key holding the policy.
	ConfigMap *LocalDataKeyReference
}

// AuditWebhookSpec configures the audit webhook backend.
type AuditWebhookSpec struct {
	// ConfigSecretName names a Secret with a kubeconfig (key kubeconfig) for the webhook.
	ConfigSecretName string
	// Mode is batch, blocking or blocking-strict.
	Mode string
	// BatchBufferSize is the event buffer size in batch mode.
	BatchBufferSize int32
	// BatchMaxSize is the maximum batch size in batch mode.
	BatchMaxSize int32
	// BatchMaxWait is how long a partial batch waits before it is sent.
	BatchMaxWait *metav1.Duration
	// BatchThrottleEnable turns batch throttling on.
	BatchThrottleEnable bool
	// BatchThrottleQPS is the batches per second allowed, as a decimal string.
	BatchThrottleQPS string
	// BatchThrottleBurst is the batch burst allowed.
	BatchThrottleBurst int32
	// InitialBackoff is the wait before the first retry.
	InitialBackoff *metav1.Duration
	// TruncateEnabled turns event and batch truncation on.
	TruncateEnabled bool
	// TruncateMaxBatchSize is the largest batch sent, in bytes.
	TruncateMaxBatchSize int32
	// TruncateMaxEventSize is the largest event sent, in bytes.
	TruncateMaxEventSize int32
	// Version is the audit API group version sent, for example audit.k8s.io/v1.
	Version string
}

// AuthorizationSpec configures authorization of a shard.
type AuthorizationSpec struct {
	// Webhook configures a webhook authorizer.
	Webhook *AuthorizationWebhookSpec
	// AllowPaths are HTTP paths authorized without asking any authorizer.
	AllowPaths []string
	// Order is the authorizers kcp asks, in order.
	Order []string
}

// AuthorizationWebhookSpec configures a webhook authorizer.
type AuthorizationWebhookSpec struct {
	// ConfigSecretName names a Secret with a kubeconfig (key kubeconfig) for the webhook.
	ConfigSecretName string
	// AllowPaths are HTTP paths authorized without asking the webhook.
	AllowPaths []string
	// CacheAuthorizedTTL is how long an allow is cached.
	CacheAuthorizedTTL *metav1.Duration
	// CacheUnauthorizedTTL is how long a deny is cached.
	CacheUnauthorizedTTL *metav1.Duration
	// Version of SubjectAccessReview sent: v1 or v1beta1.
	Version string
}

// ComponentSpec is what the spec of every component shares: its image, scale and resources,
// how its certificates, Deployment and Service are customized, and what is added to its pods.
type ComponentSpec struct {
	// Image overrides the kcp image.
	Image *ImageSpec
	// Replicas is the number of pods. When unset, a new Deployment starts with 2 (a CacheServer
	// without etcd with 1) and whoever scales it afterwards, for example an HPA, owns the count.
	Replicas *int32
	// Resources of the component's container.
	Resources *corev1.ResourceRequirements
	// CertificateTemplates customize the component's certificates, keyed by role.
	CertificateTemplates CertificateTemplateMap
	// ServiceTemplate customizes the component's Service.
	ServiceTemplate *ServiceTemplate
	// DeploymentTemplate customizes the component's Deployment.
	DeploymentTemplate *DeploymentTemplate
	// ExtraArgs are appended to the component's command line.
	ExtraArgs []string
	// ExtraVolumes are added to the pod: configMap, csi, downwardAPI, emptyDir, ephemeral,
	// persistentVolumeClaim, projected or secret, the sources of Pod Security's restricted level.
	ExtraVolumes []corev1.Volume
	// ExtraVolumeMounts are added to the component's container. Each names a volume of
	// extraVolumes.
	ExtraVolumeMounts []corev1.VolumeMount
	// Logging configures logging.
	Logging *LoggingSpec
}

// CommonShardSpec is what a RootShard and a Shard share.
type CommonShardSpec struct {
	ComponentSpec

	// ClusterDomain is the cluster's DNS domain. Defaults to cluster.local.
	ClusterDomain string
	// ShardBaseURL is an https URL that overrides the shard's in-cluster base URL.
	ShardBaseURL string
	// Etcd is the etcd cluster the shard stores its data in.
	Etcd EtcdConfig
	// Audit configures auditing.
	Audit *AuditSpec
	// Authorization configures a webhook authorizer.
	Authorization *AuthorizationSpec
	// Auth configures authentication.
	Auth *AuthSpec
	// CABundleSecretRef names a Secret whose tls.crt is added to the server CA bundle.
	CABundleSecretRef *corev1.LocalObjectReference
	// ClientCABundleRef names a Secret whose tls.crt is added to the client CA bundle.
	ClientCABundleRef *corev1.LocalObjectReference
	// KcpVirtualWorkspace names a VirtualWorkspace in the same namespace that serves kcp's
	// virtual workspaces out of process: the shard then announces its URL instead of serving
	// them itself. It may change: the shard rolls out with the new URL.
	KcpVirtualWorkspace *corev1.LocalObjectReference
}

// ShardReference names a Shard.
type ShardReference struct {
	// Name of the Shard.
	Name string
	// Link is the Link a Shard of another cluster reported itself over; empty for a local one.
	Link string
	// Namespace is a linked Shard's namespace in its own cluster.
	Namespace string
}
