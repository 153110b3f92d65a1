package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ImageSpec selects the container image of a component.
type ImageSpec struct {
	// Repository is the image repository. Defaults to ghcr.io/kcp-dev/kcp. Another repository
	// runs code of the author's choice, so it needs create on deployments.apps in the namespace.
	// +optional
	Repository string `json:"repository,omitempty"`
	// Tag is the image tag. Defaults to the kcp release this server was built for.
	// +optional
	Tag string `json:"tag,omitempty"`
	// ImagePullSecrets are Secrets in the same namespace used to pull the image.
	// +optional
	// +listType=atomic
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
}

// RootShardConfig points at the RootShard an object belongs to.
type RootShardConfig struct {
	// Reference names a RootShard in the same namespace.
	// +optional
	Reference *corev1.LocalObjectReference `json:"ref,omitempty"`
	// SecretRef names a copy of a RootShard's generated join Secret (<rootshard>-shard-join
	// for a Shard, <rootshard>-front-proxy-join for a FrontProxy) in the same namespace: the
	// RootShard may live in another namespace or cluster. Exactly one of ref and secretRef
	// is set.
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`
}

// CacheConfig points at the CacheServer a shard uses.
type CacheConfig struct {
	// Reference names a CacheServer in the same namespace.
	// +optional
	Reference *corev1.LocalObjectReference `json:"ref,omitempty"`
	// SecretRef names a copy of a CacheServer's generated <cacheserver>-cache-client Secret
	// in the same namespace: the CacheServer may live in another namespace or cluster. At
	// most one of ref and secretRef is set.
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`
	// Embedded is kcp-operator's switch for the root shard's embedded cache. Deprecated: the
	// embedded cache is used exactly when no ref is given. Accepted with a warning.
	Embedded *EmbeddedCacheConfiguration `json:"embedded,omitempty"`
}

// EmbeddedCacheConfiguration is the deprecated embedded-cache switch of a RootShard.
type EmbeddedCacheConfiguration struct {
	// Enabled must not be false together with a missing ref: a RootShard always has a cache.
	Enabled bool `json:"enabled"`
}

// EtcdConfig configures the etcd cluster a component stores its data in.
type EtcdConfig struct {
	// Endpoints are the etcd client URLs of an etcd cluster run elsewhere, for example
	// https://etcd-0.etcd:2379. Exactly one of endpoints and managed is set.
	// +optional
	// +listType=atomic
	Endpoints []string `json:"endpoints,omitempty"`
	// TLSConfig configures client TLS toward an etcd given by endpoints.
	// +optional
	TLSConfig *EtcdTLSConfig `json:"tlsConfig,omitempty"`
	// Prefix is the key prefix under which objects are stored. It must start with a slash.
	// +optional
	Prefix string `json:"prefix,omitempty"`
	// Managed runs an etcd cluster for the shard as a StatefulSet next to it, with
	// certificates from the RootShard's etcd CAs. It is the default when endpoints is empty.
	// +optional
	Managed *ManagedEtcd `json:"managed,omitempty"`
}

// ManagedEtcd is an etcd cluster the server runs for a shard.
type ManagedEtcd struct {
	// Replicas is the number of etcd members: 1, 3 or 5. Defaults to 3. Immutable for now.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Storage is each member's persistent volume. Immutable.
	// +optional
	Storage *EtcdStorage `json:"storage,omitempty"`
	// Image selects the etcd image. Defaults to the etcd release this server was built for.
	// +optional
	Image *ImageSpec `json:"image,omitempty"`
	// Resources are the etcd container's compute resources.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// Template customizes the etcd StatefulSet and its pods.
	// +optional
	Template *DeploymentTemplate `json:"template,omitempty"`
}

// EtcdStorage is the persistent volume of each etcd member.
type EtcdStorage struct {
	// Size is the requested size of each member's volume. Defaults to 8Gi.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
	// StorageClassName is the StorageClass of the volumes; the cluster's default when unset.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// EtcdTLSConfig names the Secret with the client certificate for etcd.
type EtcdTLSConfig struct {
	// SecretRef names a Secret holding tls.crt, tls.key and ca.crt.
	SecretRef corev1.LocalObjectReference `json:"secretRef"`
}

// ExternalConfig is how a kcp instance is reached from outside the cluster.
type ExternalConfig struct {
	// Hostname is the external name of the kcp instance, matched by a DNS record that points
	// at the front proxy.
	Hostname string `json:"hostname"`
	// Port is the external port. Defaults to 6443.
	// +optional
	Port int32 `json:"port,omitempty"`
	// PrivateHostname is the name internal components use instead of hostname.
	// +optional
	PrivateHostname string `json:"privateHostname,omitempty"`
	// PrivatePort is the port internal components use instead of port.
	// +optional
	PrivatePort *int32 `json:"privatePort,omitempty"`
}

// ObjectReference names an object by name, kind and group.
type ObjectReference struct {
	// Name of the object.
	Name string `json:"name"`
	// Kind of the object: Issuer or ClusterIssuer. Defaults to Issuer.
	// +optional
	Kind string `json:"kind,omitempty"`
	// Group of the object. Defaults to cert-manager.io.
	// +optional
	Group string `json:"group,omitempty"`
}

// Certificates configures where the root CA of a setup comes from. Exactly one of issuerRef
// and caSecretRef is set. When the whole field is absent, the namespace bootstrap PKI is used.
type Certificates struct {
	// IssuerRef is a cert-manager Issuer or ClusterIssuer that signs the setup's root CA. Setting
	// it needs create on certificates.cert-manager.io in the namespace.
	// +optional
	IssuerRef *ObjectReference `json:"issuerRef,omitempty"`
	// CASecretRef is a Secret with a CA certificate and key (tls.crt, tls.key) that signs the
	// setup's certificates. Setting it needs get on that Secret.
	// +optional
	CASecretRef *corev1.LocalObjectReference `json:"caSecretRef,omitempty"`
}

// CertificateTemplateMap customizes generated Certificates, keyed by certificate role
// (server, client, requestheader, kubeconfig, service-account, logical-cluster-admin, ...) or
// by <role>-ca for a CA.
type CertificateTemplateMap map[string]CertificateTemplate

// CertificateTemplate is merged into a generated cert-manager Certificate.
type CertificateTemplate struct {
	// Metadata is merged into the Certificate's metadata.
	// +optional
	Metadata *MetadataTemplate `json:"metadata,omitempty"`
	// Spec is merged into the Certificate's spec.
	// +optional
	Spec *CertificateSpecTemplate `json:"spec,omitempty"`
}

// MetadataTemplate holds labels and annotations copied onto a generated object.
type MetadataTemplate struct {
	// Labels are copied onto the object.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are copied onto the object.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// CertificateSpecTemplate is the part of a cert-manager Certificate spec that may be customized.
type CertificateSpecTemplate struct {
	// Subject holds X.509 subject attributes.
	// +optional
	Subject *X509Subject `json:"subject,omitempty"`
	// DNSNames are added to the generated DNS subject alternative names.
	// +optional
	// +listType=atomic
	DNSNames []string `json:"dnsNames,omitempty"`
	// IPAddresses are added to the generated IP subject alternative names.
	// +optional
	// +listType=atomic
	IPAddresses []string `json:"ipAddresses,omitempty"`
	// Duration is the requested lifetime, at least 1h.
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
	// RenewBefore is how long before expiry the certificate is renewed, at least 5m and
	// shorter than the duration.
	// +optional
	RenewBefore *metav1.Duration `json:"renewBefore,omitempty"`
	// PrivateKey sets the key algorithm, size, encoding and rotation policy.
	// +optional
	PrivateKey *CertificatePrivateKeyTemplate `json:"privateKey,omitempty"`
	// SecretTemplate holds labels and annotations copied onto the certificate's Secret.
	// +optional
	SecretTemplate *MetadataTemplate `json:"secretTemplate,omitempty"`
	// IssuerRef issues this one certificate from another cert-manager Issuer or ClusterIssuer,
	// for example a public ACME issuer for the front proxy. With it, dnsNames and ipAddresses
	// replace the generated subject alternative names instead of adding to them.
	IssuerRef *ObjectReference `json:"issuerRef,omitempty"`
}

// X509Subject holds X.509 subject attributes other than the common name.
type X509Subject struct {
	// +optional
	// +listType=atomic
	Organizations []string `json:"organizations,omitempty"`
	// +optional
	// +listType=atomic
	Countries []string `json:"countries,omitempty"`
	// +optional
	// +listType=atomic
	OrganizationalUnits []string `json:"organizationalUnits,omitempty"`
	// +optional
	// +listType=atomic
	Localities []string `json:"localities,omitempty"`
	// +optional
	// +listType=atomic
	Provinces []string `json:"provinces,omitempty"`
	// +optional
	// +listType=atomic
	StreetAddresses []string `json:"streetAddresses,omitempty"`
	// +optional
	// +listType=atomic
	PostalCodes []string `json:"postalCodes,omitempty"`
	// +optional
	SerialNumber string `json:"serialNumber,omitempty"`
}

// CertificatePrivateKeyTemplate sets the private key of a generated certificate.
type CertificatePrivateKeyTemplate struct {
	// RotationPolicy is Never or Always.
	// +optional
	RotationPolicy string `json:"rotationPolicy,omitempty"`
	// Encoding is PKCS1 or PKCS8.
	// +optional
	Encoding string `json:"encoding,omitempty"`
	// Algorithm is RSA, ECDSA or Ed25519. Certificates default to ECDSA P-256.
	// +optional
	Algorithm string `json:"algorithm,omitempty"`
	// Size is the key size: 2048, 4096 or 8192 for RSA; 256, 384 or 521 for ECDSA.
	// +optional
	Size int32 `json:"size,omitempty"`
}

// DeploymentTemplate customizes a generated Deployment.
type DeploymentTemplate struct {
	// Metadata is merged into the Deployment's metadata.
	// +optional
	Metadata *MetadataTemplate `json:"metadata,omitempty"`
	// Spec is merged into the Deployment's spec.
	// +optional
	Spec *DeploymentSpecTemplate `json:"spec,omitempty"`
}

// DeploymentSpecTemplate customizes a generated Deployment's spec.
type DeploymentSpecTemplate struct {
	// Template customizes the pods.
	// +optional
	Template *PodTemplateSpec `json:"template,omitempty"`
}

// PodTemplateSpec customizes the pods of a generated Deployment.
type PodTemplateSpec struct {
	// Metadata is merged into the pods' metadata.
	// +optional
	Metadata *MetadataTemplate `json:"metadata,omitempty"`
	// Spec is merged into the pods' spec.
	// +optional
	Spec *PodSpecTemplate `json:"spec,omitempty"`
}

// PodSpecTemplate is the part of a pod spec that may be customized.
type PodSpecTemplate struct {
	// NodeSelector must match a node's labels for the pod to be scheduled there.
	// +optional
	// +mapType=atomic
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Affinity holds the pod's scheduling constraints.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// Tolerations of the pod. Each names the taint it tolerates.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// HostAliases are added to the pod's hosts file.
	// +optional
	// +listType=atomic
	HostAliases []corev1.HostAlias `json:"hostAliases,omitempty"`
	// ImagePullSecrets are used to pull the pod's images.
	// +optional
	// +listType=atomic
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// TopologySpreadConstraints spread the pods across topology domains.
	// +optional
	// +listType=atomic
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
}

// ServiceTemplate customizes a generated Service.
type ServiceTemplate struct {
	// Metadata is merged into the Service's metadata.
	// +optional
	Metadata *MetadataTemplate `json:"metadata,omitempty"`
	// Spec is merged into the Service's spec.
	// +optional
	Spec *ServiceSpecTemplate `json:"spec,omitempty"`
}

// ServiceSpecTemplate is the part of a Service spec that may be customized.
type ServiceSpecTemplate struct {
	// Type is ClusterIP, NodePort or LoadBalancer. NodePort and LoadBalancer need create on
	// services in the namespace.
	// +optional
	Type corev1.ServiceType `json:"type,omitempty"`
	// ClusterIP is an IP address or None.
	// +optional
	ClusterIP string `json:"clusterIP,omitempty"`
}

// LocalDataKeyReference names a key in a Secret or ConfigMap of the same namespace.
type LocalDataKeyReference struct {
	// Name of the Secret or ConfigMap.
	Name string `json:"name"`
	// Key in its data.
	Key string `json:"key,omitempty"`
}

// LoggingSpec configures a component's logging.
type LoggingSpec struct {
	// Level is the klog verbosity, from 0 to 10.
	// +optional
	Level int32 `json:"level,omitempty"`
}

// AuthSpec configures authentication of a kcp component.
type AuthSpec struct {
	// OIDC configures OpenID Connect authentication.
	// +optional
	OIDC *OIDCConfiguration `json:"oidc,omitempty"`
	// ServiceAccount configures kcp service account authentication.
	// +optional
	ServiceAccount *ServiceAccountAuthentication `json:"serviceAccount,omitempty"`
	// Webhook configures token authentication by a webhook.
	Webhook *AuthWebhookSpec `json:"webhook,omitempty"`
	// TokenAuthFile configures static token authentication from a Secret.
	TokenAuthFile *TokenAuthFileSpec `json:"tokenAuthFile,omitempty"`
	// DropGroups are removed from requests before they reach the shards.
	// +optional
	// +listType=atomic
	DropGroups []string `json:"dropGroups,omitempty"`
	// PassOnGroups are the only groups passed on to the shards.
	// +optional
	// +listType=atomic
	PassOnGroups []string `json:"passOnGroups,omitempty"`
}

// OIDCConfiguration configures OpenID Connect authentication.
type OIDCConfiguration struct {
	// IssuerURL is the https URL of the OIDC issuer.
	IssuerURL string `json:"issuerURL"`
	// ClientID is the client ID configured at the issuer.
	ClientID string `json:"clientID"`
	// GroupsClaim is the claim that holds the groups.
	// +optional
	GroupsClaim string `json:"groupsClaim,omitempty"`
	// UsernameClaim is the claim that holds the username. Defaults to sub in kcp.
	// +optional
	UsernameClaim string `json:"usernameClaim,omitempty"`
	// GroupsPrefix is put before every group.
	// +optional
	GroupsPrefix string `json:"groupsPrefix,omitempty"`
	// UsernamePrefix is put before the username.
	// +optional
	UsernamePrefix string `json:"usernamePrefix,omitempty"`
	// CAFileRef names a key of a Secret with the CA bundle that verifies the issuer.
	// +optional
	CAFileRef *LocalDataKeyReference `json:"caFileRef,omitempty"`
	// ClientSecret is kcp-operator's OIDC client secret. Deprecated: kube's OIDC
	// authentication needs no secret. Accepted with a warning and never passed to kcp.
	ClientSecret string `json:"clientSecret,omitempty"`
}

// AuthWebhookSpec configures token authentication by a webhook.
type AuthWebhookSpec struct {
	// ConfigSecretName names a Secret whose key kubeconfig is the webhook's kubeconfig file.
	ConfigSecretName string `json:"configSecretName"`
	// CacheAuthenticationTTL is how long webhook answers are cached.
	CacheAuthenticationTTL *metav1.Duration `json:"cacheAuthenticationTTL,omitempty"`
	// Version is the TokenReview version the webhook speaks: v1 or v1beta1.
	Version string `json:"version,omitempty"`
}

// TokenAuthFileSpec names a Secret key holding a static token file.
type TokenAuthFileSpec struct {
	// SecretName names the Secret.
	SecretName string `json:"secretName"`
	// Key is the Secret's key that holds the token file. Defaults to token.csv.
	Key string `json:"key,omitempty"`
}

// ServiceAccountAuthentication configures kcp service account authentication.
type ServiceAccountAuthentication struct {
	// Enabled turns service account authentication on.
	Enabled bool `json:"enabled"`
}

// AuditSpec configures auditing of a shard.
type AuditSpec struct {
	// Policy is the audit policy.
	// +optional
	Policy *AuditPolicySpec `json:"policy,omitempty"`
	// Webhook sends audit events to a webhook.
	// +optional
	Webhook *AuditWebhookSpec `json:"webhook,omitempty"`
}

// AuditPolicySpec names the ConfigMap key that holds an audit policy file.
type AuditPolicySpec struct {
	// ConfigMap names a ConfigMap key holding the policy.
	// +optional
	ConfigMap *LocalDataKeyReference `json:"configMap,omitempty"`
}

// AuditWebhookSpec configures the audit webhook backend.
type AuditWebhookSpec struct {
	// ConfigSecretName names a Secret with a kubeconfig (key kubeconfig) for the webhook.
	ConfigSecretName string `json:"configSecretName"`
	// Mode is batch, blocking or blocking-strict.
	// +optional
	Mode string `json:"mode,omitempty"`
	// BatchBufferSize is the event buffer size in batch mode.
	// +optional
	BatchBufferSize int32 `json:"batchBufferSize,omitempty"`
	// BatchMaxSize is the maximum batch size in batch mode.
	// +optional
	BatchMaxSize int32 `json:"batchMaxSize,omitempty"`
	// BatchMaxWait is how long a partial batch waits before it is sent.
	// +optional
	BatchMaxWait *metav1.Duration `json:"batchMaxWait,omitempty"`
	// BatchThrottleEnable turns batch throttling on.
	// +optional
	BatchThrottleEnable bool `json:"batchThrottleEnable,omitempty"`
	// BatchThrottleQPS is the batches per second allowed, as a decimal string.
	// +optional
	BatchThrottleQPS string `json:"batchThrottleQPS,omitempty"`
	// BatchThrottleBurst is the batch burst allowed.
	// +optional
	BatchThrottleBurst int32 `json:"batchThrottleBurst,omitempty"`
	// InitialBackoff is the wait before the first retry.
	// +optional
	InitialBackoff *metav1.Duration `json:"initialBackoff,omitempty"`
	// TruncateEnabled turns event and batch truncation on.
	// +optional
	TruncateEnabled bool `json:"truncateEnabled,omitempty"`
	// TruncateMaxBatchSize is the largest batch sent, in bytes.
	// +optional
	TruncateMaxBatchSize int32 `json:"truncateMaxBatchSize,omitempty"`
	// TruncateMaxEventSize is the largest event sent, in bytes.
	// +optional
	TruncateMaxEventSize int32 `json:"truncateMaxEventSize,omitempty"`
	// Version is the audit API group version sent, for example audit.k8s.io/v1.
	// +optional
	Version string `json:"version,omitempty"`
}

// AuthorizationSpec configures authorization of a shard.
type AuthorizationSpec struct {
	// Webhook configures a webhook authorizer.
	// +optional
	Webhook *AuthorizationWebhookSpec `json:"webhook,omitempty"`
}

// AuthorizationWebhookSpec configures a webhook authorizer.
type AuthorizationWebhookSpec struct {
	// ConfigSecretName names a Secret with a kubeconfig (key kubeconfig) for the webhook.
	ConfigSecretName string `json:"configSecretName"`
	// AllowPaths are HTTP paths authorized without asking the webhook.
	// +optional
	// +listType=atomic
	AllowPaths []string `json:"allowPaths,omitempty"`
	// CacheAuthorizedTTL is how long an allow is cached.
	// +optional
	CacheAuthorizedTTL *metav1.Duration `json:"cacheAuthorizedTTL,omitempty"`
	// CacheUnauthorizedTTL is how long a deny is cached.
	// +optional
	CacheUnauthorizedTTL *metav1.Duration `json:"cacheUnauthorizedTTL,omitempty"`
	// Version of SubjectAccessReview sent: v1 or v1beta1.
	// +optional
	Version string `json:"version,omitempty"`
}

// ComponentSpec is what the spec of every component shares: its image, scale and resources,
// how its certificates, Deployment and Service are customized, and what is added to its pods.
type ComponentSpec struct {
	// Image overrides the kcp image.
	// +optional
	Image *ImageSpec `json:"image,omitempty"`
	// Replicas is the number of pods. When unset, a new Deployment starts with 2 (a CacheServer
	// without etcd with 1) and whoever scales it afterwards, for example an HPA, owns the count.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Resources of the component's container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// CertificateTemplates customize the component's certificates, keyed by role.
	// +optional
	CertificateTemplates CertificateTemplateMap `json:"certificateTemplates,omitempty"`
	// ServiceTemplate customizes the component's Service.
	// +optional
	ServiceTemplate *ServiceTemplate `json:"serviceTemplate,omitempty"`
	// DeploymentTemplate customizes the component's Deployment.
	// +optional
	DeploymentTemplate *DeploymentTemplate `json:"deploymentTemplate,omitempty"`
	// ExtraArgs are appended to the component's command line.
	// +optional
	// +listType=atomic
	ExtraArgs []string `json:"extraArgs,omitempty"`
	// ExtraVolumes are added to the pod: configMap, csi, downwardAPI, emptyDir, ephemeral,
	// persistentVolumeClaim, projected or secret, the sources of Pod Security's restricted level.
	// +optional
	// +listType=atomic
	ExtraVolumes []corev1.Volume `json:"extraVolumes,omitempty"`
	// ExtraVolumeMounts are added to the component's container. Each names a volume of
	// extraVolumes.
	// +optional
	// +listType=atomic
	ExtraVolumeMounts []corev1.VolumeMount `json:"extraVolumeMounts,omitempty"`
	// Logging configures logging.
	// +optional
	Logging *LoggingSpec `json:"logging,omitempty"`
}

// CommonShardSpec is what a RootShard and a Shard share.
type CommonShardSpec struct {
	ComponentSpec `json:",inline"`

	// ClusterDomain is the cluster's DNS domain. Defaults to cluster.local.
	// +optional
	ClusterDomain string `json:"clusterDomain,omitempty"`
	// ShardBaseURL is an https URL that overrides the shard's in-cluster base URL.
	// +optional
	ShardBaseURL string `json:"shardBaseURL,omitempty"`
	// Etcd is the etcd cluster the shard stores its data in. Defaults to a managed etcd.
	// +optional
	Etcd EtcdConfig `json:"etcd,omitempty"`
	// Audit configures auditing.
	// +optional
	Audit *AuditSpec `json:"audit,omitempty"`
	// Authorization configures a webhook authorizer.
	// +optional
	Authorization *AuthorizationSpec `json:"authorization,omitempty"`
	// Auth configures authentication.
	// +optional
	Auth *AuthSpec `json:"auth,omitempty"`
	// CABundleSecretRef names a Secret whose tls.crt is added to the server CA bundle.
	// +optional
	CABundleSecretRef *corev1.LocalObjectReference `json:"caBundleSecretRef,omitempty"`
	// ClientCABundleRef names a Secret whose tls.crt is added to the client CA bundle.
	// +optional
	ClientCABundleRef *corev1.LocalObjectReference `json:"clientCABundleRef,omitempty"`
	// KcpVirtualWorkspace names a VirtualWorkspace in the same namespace that serves kcp's
	// virtual workspaces out of process: the shard then announces its URL instead of serving
	// them itself. It may change: the shard rolls out with the new URL.
	KcpVirtualWorkspace *corev1.LocalObjectReference `json:"kcpVirtualWorkspace,omitempty"`
}

// ShardReference names a Shard.
type ShardReference struct {
	// Name of the Shard.
	Name string `json:"name"`
}
