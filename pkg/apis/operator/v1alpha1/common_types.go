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
	Repository string `json:"repository,omitempty" protobuf:"bytes,1,opt,name=repository"`
	// Tag is the image tag. Defaults to the kcp release this server was built for.
	// +optional
	Tag string `json:"tag,omitempty" protobuf:"bytes,2,opt,name=tag"`
	// ImagePullSecrets are Secrets in the same namespace used to pull the image.
	// +optional
	// +listType=atomic
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty" protobuf:"bytes,3,rep,name=imagePullSecrets"`
}

// RootShardConfig points at the RootShard an object belongs to.
type RootShardConfig struct {
	// Reference names a RootShard in the same namespace.
	// +optional
	Reference *corev1.LocalObjectReference `json:"ref,omitempty" protobuf:"bytes,1,opt,name=ref"`
	// SecretRef names a copy of a RootShard's generated join Secret (<rootshard>-shard-join
	// for a Shard, <rootshard>-front-proxy-join for a FrontProxy) in the same namespace: the
	// RootShard may live in another namespace or cluster.
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty" protobuf:"bytes,2,opt,name=secretRef"`
	// Link names the bootstrap Secret of a Link declared on the RootShard's side, in the
	// same namespace: the RootShard lives in another cluster, and the two servers keep the
	// object current over the link, with no CA key in this cluster. Exactly one of ref,
	// secretRef and link is set.
	// +optional
	Link *RootShardLink `json:"link,omitempty" protobuf:"bytes,3,opt,name=link"`
}

// RootShardLink joins a RootShard of another cluster through a link (docs/links.md).
type RootShardLink struct {
	// SecretRef names the bootstrap Secret (<link>-link-bootstrap, carried once from the
	// RootShard's cluster) in the same namespace.
	SecretRef corev1.LocalObjectReference `json:"secretRef" protobuf:"bytes,1,opt,name=secretRef"`
}

// CacheConfig points at the CacheServer a shard uses.
type CacheConfig struct {
	// Reference names a CacheServer in the same namespace.
	// +optional
	Reference *corev1.LocalObjectReference `json:"ref,omitempty" protobuf:"bytes,1,opt,name=ref"`
	// SecretRef names a copy of a CacheServer's generated <cacheserver>-cache-client Secret
	// in the same namespace: the CacheServer may live in another namespace or cluster. At
	// most one of ref, secretRef and link is set.
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty" protobuf:"bytes,2,opt,name=secretRef"`
	// Link names the bootstrap Secret of a Link whose cacheServerRef names the CacheServer,
	// in the same namespace: its cache client is signed over the link, no key leaves the
	// home. A Shard only.
	// +optional
	Link *RootShardLink `json:"link,omitempty" protobuf:"bytes,4,opt,name=link"`
	// Embedded is kcp-operator's switch for the root shard's embedded cache. Deprecated: the
	// embedded cache is used exactly when no ref is given. Accepted with a warning.
	Embedded *EmbeddedCacheConfiguration `json:"embedded,omitempty" protobuf:"bytes,3,opt,name=embedded"`
}

// EmbeddedCacheConfiguration is the deprecated embedded-cache switch of a RootShard.
type EmbeddedCacheConfiguration struct {
	// Enabled must not be false together with a missing ref: a RootShard always has a cache.
	Enabled bool `json:"enabled" protobuf:"varint,1,opt,name=enabled"`
}

// EtcdConfig configures the etcd cluster a component stores its data in.
type EtcdConfig struct {
	// Endpoints are the etcd client URLs of an etcd cluster run elsewhere, for example
	// https://etcd-0.etcd:2379. Exactly one of endpoints and managed is set.
	// +optional
	// +listType=atomic
	Endpoints []string `json:"endpoints,omitempty" protobuf:"bytes,1,rep,name=endpoints"`
	// TLSConfig configures client TLS toward an etcd given by endpoints.
	// +optional
	TLSConfig *EtcdTLSConfig `json:"tlsConfig,omitempty" protobuf:"bytes,2,opt,name=tlsConfig"`
	// Prefix is the key prefix under which objects are stored. It must start with a slash.
	// +optional
	Prefix string `json:"prefix,omitempty" protobuf:"bytes,3,opt,name=prefix"`
	// Managed runs an etcd cluster for the shard as a StatefulSet next to it, with
	// certificates from the RootShard's etcd CAs. It is the default when endpoints is empty.
	// +optional
	Managed *ManagedEtcd `json:"managed,omitempty" protobuf:"bytes,4,opt,name=managed"`
}

// ManagedEtcd is an etcd cluster the server runs for a shard.
type ManagedEtcd struct {
	// Replicas is the number of etcd members: 1, 3 or 5. Defaults to 3. Immutable for now.
	// +optional
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
	// Storage is each member's persistent volume. Immutable.
	// +optional
	Storage *EtcdStorage `json:"storage,omitempty" protobuf:"bytes,2,opt,name=storage"`
	// Image selects the etcd image. Defaults to the etcd release this server was built for.
	// +optional
	Image *ImageSpec `json:"image,omitempty" protobuf:"bytes,3,opt,name=image"`
	// Resources are the etcd container's compute resources.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty" protobuf:"bytes,4,opt,name=resources"`
	// Template customizes the etcd StatefulSet and its pods.
	// +optional
	Template *DeploymentTemplate `json:"template,omitempty" protobuf:"bytes,5,opt,name=template"`
	// Quota is etcd's backend quota (--quota-backend-bytes): a member whose database reaches
	// it raises the NOSPACE alarm and refuses writes until it is compacted, defragmented and
	// the alarm disarmed (the server does that). Defaults to 2Gi, etcd's own default; at most
	// storage.size.
	// +optional
	Quota *resource.Quantity `json:"quota,omitempty" protobuf:"bytes,6,opt,name=quota"`
	// Defragmentation says when the server defragments a member: one member at a time, when
	// the share of its database file that is not in use reaches a threshold.
	// +optional
	Defragmentation *EtcdDefragmentation `json:"defragmentation,omitempty" protobuf:"bytes,7,opt,name=defragmentation"`
	// Backup takes snapshots on a schedule and on demand into a store.
	// +optional
	Backup *EtcdBackup `json:"backup,omitempty" protobuf:"bytes,8,opt,name=backup"`
	// Restore starts the cluster from a snapshot, when none of its members has data yet.
	// +optional
	Restore *EtcdRestore `json:"restore,omitempty" protobuf:"bytes,9,opt,name=restore"`
}

// EtcdDefragmentation says when a managed etcd's members are defragmented.
type EtcdDefragmentation struct {
	// ThresholdPercent is the share of a member's database file not in use
	// ((size - sizeInUse) / size, in percent) from which the member is defragmented: 1 to 100.
	// Defaults to 50.
	// +optional
	ThresholdPercent *int32 `json:"thresholdPercent,omitempty" protobuf:"varint,1,opt,name=thresholdPercent"`
	// MinimumSize is the database size below which a member is never defragmented for its
	// fragmentation (a NOSPACE alarm is always cleared). Defaults to 64Mi.
	// +optional
	MinimumSize *resource.Quantity `json:"minimumSize,omitempty" protobuf:"bytes,2,opt,name=minimumSize"`
}

// ManagedEtcdStatus is what the server observes of a managed etcd.
type ManagedEtcdStatus struct {
	// Members are the members as etcd reports them, by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Members []EtcdMemberStatus `json:"members,omitempty" protobuf:"bytes,1,rep,name=members"`
	// Snapshots are the snapshots of this etcd its store keeps, newest first.
	// +optional
	// +listType=map
	// +listMapKey=name
	Snapshots []EtcdSnapshotInfo `json:"snapshots,omitempty" protobuf:"bytes,2,rep,name=snapshots"`
	// LastScheduleTime is when the schedule last took a snapshot.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty" protobuf:"bytes,3,opt,name=lastScheduleTime"`
	// PendingSnapshot is the snapshot the backup subresource asked for that the server has
	// not taken yet: at most one at a time.
	// +optional
	PendingSnapshot *EtcdPendingSnapshot `json:"pendingSnapshot,omitempty" protobuf:"bytes,4,opt,name=pendingSnapshot"`
}

// EtcdMemberStatus is one member of a managed etcd, as its own maintenance status says.
type EtcdMemberStatus struct {
	// Name is the member's pod name.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// DatabaseSize is the size of the member's database file, in bytes.
	// +optional
	DatabaseSize int64 `json:"databaseSize,omitempty" protobuf:"varint,2,opt,name=databaseSize"`
	// DatabaseSizeInUse is the part of the database file in use, in bytes; the rest is
	// free space a defragmentation gives back.
	// +optional
	DatabaseSizeInUse int64 `json:"databaseSizeInUse,omitempty" protobuf:"varint,3,opt,name=databaseSizeInUse"`
	// Leader says whether the member is the cluster's leader.
	// +optional
	Leader bool `json:"leader,omitempty" protobuf:"varint,4,opt,name=leader"`
	// Alarms are the alarms raised on the member: NOSPACE or CORRUPT.
	// +optional
	// +listType=set
	Alarms []string `json:"alarms,omitempty" protobuf:"bytes,5,rep,name=alarms"`
	// LastDefragmentationTime is when the server last defragmented the member.
	// +optional
	LastDefragmentationTime *metav1.Time `json:"lastDefragmentationTime,omitempty" protobuf:"bytes,6,opt,name=lastDefragmentationTime"`
	// Error is why the member did not answer the last time it was asked.
	// +optional
	Error string `json:"error,omitempty" protobuf:"bytes,7,opt,name=error"`
}

// EtcdStorage is the persistent volume of each etcd member.
type EtcdStorage struct {
	// VolumeSize is the requested size of each member's volume. Defaults to 8Gi.
	// The Go name is not Size because protobuf marshallers own a Size method.
	// +optional
	VolumeSize *resource.Quantity `json:"size,omitempty" protobuf:"bytes,1,opt,name=size"`
	// StorageClassName is the StorageClass of the volumes; the cluster's default when unset.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty" protobuf:"bytes,2,opt,name=storageClassName"`
}

// EtcdTLSConfig names the Secret with the client certificate for etcd.
type EtcdTLSConfig struct {
	// SecretRef names a Secret holding tls.crt, tls.key and ca.crt.
	SecretRef corev1.LocalObjectReference `json:"secretRef" protobuf:"bytes,1,opt,name=secretRef"`
}

// ExternalConfig is how a kcp instance is reached from outside the cluster.
type ExternalConfig struct {
	// Hostname is the external name of the kcp instance, matched by a DNS record that points
	// at the front proxy.
	Hostname string `json:"hostname" protobuf:"bytes,1,opt,name=hostname"`
	// Port is the external port. Defaults to 6443.
	// +optional
	Port int32 `json:"port,omitempty" protobuf:"varint,2,opt,name=port"`
	// PrivateHostname is the name internal components use instead of hostname.
	// +optional
	PrivateHostname string `json:"privateHostname,omitempty" protobuf:"bytes,3,opt,name=privateHostname"`
	// PrivatePort is the port internal components use instead of port.
	// +optional
	PrivatePort *int32 `json:"privatePort,omitempty" protobuf:"varint,4,opt,name=privatePort"`
}

// ObjectReference names an object by name, kind and group.
type ObjectReference struct {
	// Name of the object.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Kind of the object: Issuer or ClusterIssuer. Defaults to Issuer.
	// +optional
	Kind string `json:"kind,omitempty" protobuf:"bytes,2,opt,name=kind"`
	// Group of the object. Defaults to cert-manager.io.
	// +optional
	Group string `json:"group,omitempty" protobuf:"bytes,3,opt,name=group"`
}

// Certificates configures where the root CA of a setup comes from. Exactly one of issuerRef
// and caSecretRef is set. When the whole field is absent, the namespace bootstrap PKI is used.
type Certificates struct {
	// IssuerRef is a cert-manager Issuer or ClusterIssuer that signs the setup's root CA. Setting
	// it needs create on certificates.cert-manager.io in the namespace.
	// +optional
	IssuerRef *ObjectReference `json:"issuerRef,omitempty" protobuf:"bytes,1,opt,name=issuerRef"`
	// CASecretRef is a Secret with a CA certificate and key (tls.crt, tls.key) that signs the
	// setup's certificates. Setting it needs get on that Secret.
	// +optional
	CASecretRef *corev1.LocalObjectReference `json:"caSecretRef,omitempty" protobuf:"bytes,2,opt,name=caSecretRef"`
}

// CertificateTemplateMap customizes generated Certificates, keyed by certificate role
// (server, client, requestheader, kubeconfig, service-account, logical-cluster-admin, ...) or
// by <role>-ca for a CA.
type CertificateTemplateMap map[string]CertificateTemplate

// CertificateTemplate is merged into a generated cert-manager Certificate.
type CertificateTemplate struct {
	// Metadata is merged into the Certificate's metadata.
	// +optional
	Metadata *MetadataTemplate `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec is merged into the Certificate's spec.
	// +optional
	Spec *CertificateSpecTemplate `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

// MetadataTemplate holds labels and annotations copied onto a generated object.
type MetadataTemplate struct {
	// Labels are copied onto the object.
	// +optional
	Labels map[string]string `json:"labels,omitempty" protobuf:"bytes,1,rep,name=labels"`
	// Annotations are copied onto the object.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty" protobuf:"bytes,2,rep,name=annotations"`
}

// CertificateSpecTemplate is the part of a cert-manager Certificate spec that may be customized.
type CertificateSpecTemplate struct {
	// Subject holds X.509 subject attributes.
	// +optional
	Subject *X509Subject `json:"subject,omitempty" protobuf:"bytes,1,opt,name=subject"`
	// DNSNames are added to the generated DNS subject alternative names.
	// +optional
	// +listType=atomic
	DNSNames []string `json:"dnsNames,omitempty" protobuf:"bytes,2,rep,name=dnsNames"`
	// IPAddresses are added to the generated IP subject alternative names.
	// +optional
	// +listType=atomic
	IPAddresses []string `json:"ipAddresses,omitempty" protobuf:"bytes,3,rep,name=ipAddresses"`
	// Duration is the requested lifetime, at least 1h.
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty" protobuf:"bytes,4,opt,name=duration"`
	// RenewBefore is how long before expiry the certificate is renewed, at least 5m and
	// shorter than the duration.
	// +optional
	RenewBefore *metav1.Duration `json:"renewBefore,omitempty" protobuf:"bytes,5,opt,name=renewBefore"`
	// PrivateKey sets the key algorithm, size, encoding and rotation policy.
	// +optional
	PrivateKey *CertificatePrivateKeyTemplate `json:"privateKey,omitempty" protobuf:"bytes,6,opt,name=privateKey"`
	// SecretTemplate holds labels and annotations copied onto the certificate's Secret.
	// +optional
	SecretTemplate *MetadataTemplate `json:"secretTemplate,omitempty" protobuf:"bytes,7,opt,name=secretTemplate"`
	// IssuerRef issues this one certificate from another cert-manager Issuer or ClusterIssuer,
	// for example a public ACME issuer for the front proxy. With it, dnsNames and ipAddresses
	// replace the generated subject alternative names instead of adding to them.
	IssuerRef *ObjectReference `json:"issuerRef,omitempty" protobuf:"bytes,8,opt,name=issuerRef"`
}

// X509Subject holds X.509 subject attributes other than the common name.
type X509Subject struct {
	// +optional
	// +listType=atomic
	Organizations []string `json:"organizations,omitempty" protobuf:"bytes,1,rep,name=organizations"`
	// +optional
	// +listType=atomic
	Countries []string `json:"countries,omitempty" protobuf:"bytes,2,rep,name=countries"`
	// +optional
	// +listType=atomic
	OrganizationalUnits []string `json:"organizationalUnits,omitempty" protobuf:"bytes,3,rep,name=organizationalUnits"`
	// +optional
	// +listType=atomic
	Localities []string `json:"localities,omitempty" protobuf:"bytes,4,rep,name=localities"`
	// +optional
	// +listType=atomic
	Provinces []string `json:"provinces,omitempty" protobuf:"bytes,5,rep,name=provinces"`
	// +optional
	// +listType=atomic
	StreetAddresses []string `json:"streetAddresses,omitempty" protobuf:"bytes,6,rep,name=streetAddresses"`
	// +optional
	// +listType=atomic
	PostalCodes []string `json:"postalCodes,omitempty" protobuf:"bytes,7,rep,name=postalCodes"`
	// +optional
	SerialNumber string `json:"serialNumber,omitempty" protobuf:"bytes,8,opt,name=serialNumber"`
}

// CertificatePrivateKeyTemplate sets the private key of a generated certificate.
type CertificatePrivateKeyTemplate struct {
	// RotationPolicy is Never or Always.
	// +optional
	RotationPolicy string `json:"rotationPolicy,omitempty" protobuf:"bytes,1,opt,name=rotationPolicy"`
	// Encoding is PKCS1 or PKCS8.
	// +optional
	Encoding string `json:"encoding,omitempty" protobuf:"bytes,2,opt,name=encoding"`
	// Algorithm is RSA, ECDSA or Ed25519. Certificates default to ECDSA P-256.
	// +optional
	Algorithm string `json:"algorithm,omitempty" protobuf:"bytes,3,opt,name=algorithm"`
	// KeySize is the key size: 2048, 4096 or 8192 for RSA; 256, 384 or 521 for ECDSA.
	// The Go name is not Size because protobuf marshallers own a Size method.
	// +optional
	KeySize int32 `json:"size,omitempty" protobuf:"varint,4,opt,name=size"`
}

// DeploymentTemplate customizes a generated Deployment.
type DeploymentTemplate struct {
	// Metadata is merged into the Deployment's metadata.
	// +optional
	Metadata *MetadataTemplate `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec is merged into the Deployment's spec.
	// +optional
	Spec *DeploymentSpecTemplate `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

// DeploymentSpecTemplate customizes a generated Deployment's spec.
type DeploymentSpecTemplate struct {
	// Template customizes the pods.
	// +optional
	Template *PodTemplateSpec `json:"template,omitempty" protobuf:"bytes,1,opt,name=template"`
}

// PodTemplateSpec customizes the pods of a generated Deployment.
type PodTemplateSpec struct {
	// Metadata is merged into the pods' metadata.
	// +optional
	Metadata *MetadataTemplate `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec is merged into the pods' spec.
	// +optional
	Spec *PodSpecTemplate `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

// PodSpecTemplate is the part of a pod spec that may be customized.
type PodSpecTemplate struct {
	// NodeSelector must match a node's labels for the pod to be scheduled there.
	// +optional
	// +mapType=atomic
	NodeSelector map[string]string `json:"nodeSelector,omitempty" protobuf:"bytes,1,rep,name=nodeSelector"`
	// Affinity holds the pod's scheduling constraints.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty" protobuf:"bytes,2,opt,name=affinity"`
	// Tolerations of the pod. Each names the taint it tolerates.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty" protobuf:"bytes,3,rep,name=tolerations"`
	// HostAliases are added to the pod's hosts file.
	// +optional
	// +listType=atomic
	HostAliases []corev1.HostAlias `json:"hostAliases,omitempty" protobuf:"bytes,4,rep,name=hostAliases"`
	// ImagePullSecrets are used to pull the pod's images.
	// +optional
	// +listType=atomic
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty" protobuf:"bytes,5,rep,name=imagePullSecrets"`
	// TopologySpreadConstraints spread the pods across topology domains.
	// +optional
	// +listType=atomic
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty" protobuf:"bytes,6,rep,name=topologySpreadConstraints"`
}

// ServiceTemplate customizes a generated Service.
type ServiceTemplate struct {
	// Metadata is merged into the Service's metadata.
	// +optional
	Metadata *MetadataTemplate `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec is merged into the Service's spec.
	// +optional
	Spec *ServiceSpecTemplate `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

// ServiceSpecTemplate is the part of a Service spec that may be customized.
type ServiceSpecTemplate struct {
	// Type is ClusterIP, NodePort or LoadBalancer. NodePort and LoadBalancer need create on
	// services in the namespace.
	// +optional
	Type corev1.ServiceType `json:"type,omitempty" protobuf:"bytes,1,opt,name=type,casttype=k8s.io/api/core/v1.ServiceType"`
	// ClusterIP is an IP address or None.
	// +optional
	ClusterIP string `json:"clusterIP,omitempty" protobuf:"bytes,2,opt,name=clusterIP"`
}

// LocalDataKeyReference names a key in a Secret or ConfigMap of the same namespace.
type LocalDataKeyReference struct {
	// Name of the Secret or ConfigMap.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Key in its data.
	Key string `json:"key,omitempty" protobuf:"bytes,2,opt,name=key"`
}

// LoggingSpec configures a component's logging.
type LoggingSpec struct {
	// Level is the klog verbosity, from 0 to 10.
	// +optional
	Level int32 `json:"level,omitempty" protobuf:"varint,1,opt,name=level"`
}

// AuthSpec configures authentication of a kcp component.
type AuthSpec struct {
	// OIDC configures OpenID Connect authentication.
	// +optional
	OIDC *OIDCConfiguration `json:"oidc,omitempty" protobuf:"bytes,1,opt,name=oidc"`
	// ServiceAccount configures kcp service account authentication.
	// +optional
	ServiceAccount *ServiceAccountAuthentication `json:"serviceAccount,omitempty" protobuf:"bytes,2,opt,name=serviceAccount"`
	// Webhook configures token authentication by a webhook.
	Webhook *AuthWebhookSpec `json:"webhook,omitempty" protobuf:"bytes,3,opt,name=webhook"`
	// TokenAuthFile configures static token authentication from a Secret.
	TokenAuthFile *TokenAuthFileSpec `json:"tokenAuthFile,omitempty" protobuf:"bytes,4,opt,name=tokenAuthFile"`
	// DropGroups are removed from requests before they reach the shards.
	// +optional
	// +listType=atomic
	DropGroups []string `json:"dropGroups,omitempty" protobuf:"bytes,5,rep,name=dropGroups"`
	// PassOnGroups are the only groups passed on to the shards.
	// +optional
	// +listType=atomic
	PassOnGroups []string `json:"passOnGroups,omitempty" protobuf:"bytes,6,rep,name=passOnGroups"`
}

// OIDCConfiguration configures OpenID Connect authentication.
type OIDCConfiguration struct {
	// IssuerURL is the https URL of the OIDC issuer.
	IssuerURL string `json:"issuerURL" protobuf:"bytes,1,opt,name=issuerURL"`
	// ClientID is the client ID configured at the issuer.
	ClientID string `json:"clientID" protobuf:"bytes,2,opt,name=clientID"`
	// GroupsClaim is the claim that holds the groups.
	// +optional
	GroupsClaim string `json:"groupsClaim,omitempty" protobuf:"bytes,3,opt,name=groupsClaim"`
	// UsernameClaim is the claim that holds the username. Defaults to sub in kcp.
	// +optional
	UsernameClaim string `json:"usernameClaim,omitempty" protobuf:"bytes,4,opt,name=usernameClaim"`
	// GroupsPrefix is put before every group.
	// +optional
	GroupsPrefix string `json:"groupsPrefix,omitempty" protobuf:"bytes,5,opt,name=groupsPrefix"`
	// UsernamePrefix is put before the username.
	// +optional
	UsernamePrefix string `json:"usernamePrefix,omitempty" protobuf:"bytes,6,opt,name=usernamePrefix"`
	// CAFileRef names a key of a Secret with the CA bundle that verifies the issuer.
	// +optional
	CAFileRef *LocalDataKeyReference `json:"caFileRef,omitempty" protobuf:"bytes,7,opt,name=caFileRef"`
	// ClientSecret is kcp-operator's OIDC client secret. Deprecated: kube's OIDC
	// authentication needs no secret. Accepted with a warning and never passed to kcp.
	ClientSecret string `json:"clientSecret,omitempty" protobuf:"bytes,8,opt,name=clientSecret"`
}

// AuthWebhookSpec configures token authentication by a webhook.
type AuthWebhookSpec struct {
	// ConfigSecretName names a Secret whose key kubeconfig is the webhook's kubeconfig file.
	ConfigSecretName string `json:"configSecretName" protobuf:"bytes,1,opt,name=configSecretName"`
	// CacheAuthenticationTTL is how long webhook answers are cached.
	CacheAuthenticationTTL *metav1.Duration `json:"cacheAuthenticationTTL,omitempty" protobuf:"bytes,2,opt,name=cacheAuthenticationTTL"`
	// Version is the TokenReview version the webhook speaks: v1 or v1beta1.
	Version string `json:"version,omitempty" protobuf:"bytes,3,opt,name=version"`
}

// TokenAuthFileSpec names a Secret key holding a static token file.
type TokenAuthFileSpec struct {
	// SecretName names the Secret.
	SecretName string `json:"secretName" protobuf:"bytes,1,opt,name=secretName"`
	// Key is the Secret's key that holds the token file. Defaults to token.csv.
	Key string `json:"key,omitempty" protobuf:"bytes,2,opt,name=key"`
}

// ServiceAccountAuthentication configures kcp service account authentication.
type ServiceAccountAuthentication struct {
	// Enabled turns service account authentication on.
	Enabled bool `json:"enabled" protobuf:"varint,1,opt,name=enabled"`
}

// AuditSpec configures auditing of a shard.
type AuditSpec struct {
	// Policy is the audit policy.
	// +optional
	Policy *AuditPolicySpec `json:"policy,omitempty" protobuf:"bytes,1,opt,name=policy"`
	// Webhook sends audit events to a webhook.
	// +optional
	Webhook *AuditWebhookSpec `json:"webhook,omitempty" protobuf:"bytes,2,opt,name=webhook"`
}

// AuditPolicySpec names the ConfigMap key that holds an audit policy file.
type AuditPolicySpec struct {
	// ConfigMap names a ConfigMap key holding the policy.
	// +optional
	ConfigMap *LocalDataKeyReference `json:"configMap,omitempty" protobuf:"bytes,1,opt,name=configMap"`
}

// AuditWebhookSpec configures the audit webhook backend.
type AuditWebhookSpec struct {
	// ConfigSecretName names a Secret with a kubeconfig (key kubeconfig) for the webhook.
	ConfigSecretName string `json:"configSecretName" protobuf:"bytes,1,opt,name=configSecretName"`
	// Mode is batch, blocking or blocking-strict.
	// +optional
	Mode string `json:"mode,omitempty" protobuf:"bytes,2,opt,name=mode"`
	// BatchBufferSize is the event buffer size in batch mode.
	// +optional
	BatchBufferSize int32 `json:"batchBufferSize,omitempty" protobuf:"varint,3,opt,name=batchBufferSize"`
	// BatchMaxSize is the maximum batch size in batch mode.
	// +optional
	BatchMaxSize int32 `json:"batchMaxSize,omitempty" protobuf:"varint,4,opt,name=batchMaxSize"`
	// BatchMaxWait is how long a partial batch waits before it is sent.
	// +optional
	BatchMaxWait *metav1.Duration `json:"batchMaxWait,omitempty" protobuf:"bytes,5,opt,name=batchMaxWait"`
	// BatchThrottleEnable turns batch throttling on.
	// +optional
	BatchThrottleEnable bool `json:"batchThrottleEnable,omitempty" protobuf:"varint,6,opt,name=batchThrottleEnable"`
	// BatchThrottleQPS is the batches per second allowed, as a decimal string.
	// +optional
	BatchThrottleQPS string `json:"batchThrottleQPS,omitempty" protobuf:"bytes,7,opt,name=batchThrottleQPS"`
	// BatchThrottleBurst is the batch burst allowed.
	// +optional
	BatchThrottleBurst int32 `json:"batchThrottleBurst,omitempty" protobuf:"varint,8,opt,name=batchThrottleBurst"`
	// InitialBackoff is the wait before the first retry.
	// +optional
	InitialBackoff *metav1.Duration `json:"initialBackoff,omitempty" protobuf:"bytes,9,opt,name=initialBackoff"`
	// TruncateEnabled turns event and batch truncation on.
	// +optional
	TruncateEnabled bool `json:"truncateEnabled,omitempty" protobuf:"varint,10,opt,name=truncateEnabled"`
	// TruncateMaxBatchSize is the largest batch sent, in bytes.
	// +optional
	TruncateMaxBatchSize int32 `json:"truncateMaxBatchSize,omitempty" protobuf:"varint,11,opt,name=truncateMaxBatchSize"`
	// TruncateMaxEventSize is the largest event sent, in bytes.
	// +optional
	TruncateMaxEventSize int32 `json:"truncateMaxEventSize,omitempty" protobuf:"varint,12,opt,name=truncateMaxEventSize"`
	// Version is the audit API group version sent, for example audit.k8s.io/v1.
	// +optional
	Version string `json:"version,omitempty" protobuf:"bytes,13,opt,name=version"`
}

// AuthorizationSpec configures authorization of a shard: kcp's authorizers, in order, and
// the paths authorized without asking any.
type AuthorizationSpec struct {
	// Webhook configures a webhook authorizer.
	// +optional
	Webhook *AuthorizationWebhookSpec `json:"webhook,omitempty" protobuf:"bytes,1,opt,name=webhook"`
	// AllowPaths are HTTP paths authorized without asking any authorizer
	// (--authorization-always-allow-paths; kcp's default is /healthz, /readyz and /livez). A
	// path ending in * is a prefix. Replaces the deprecated webhook.allowPaths.
	// +optional
	// +listType=atomic
	AllowPaths []string `json:"allowPaths,omitempty" protobuf:"bytes,2,rep,name=allowPaths"`
	// Order is the authorizers kcp asks, in order (--authorization-order): each of
	// AlwaysAllowGroups, AlwaysAllowPaths, RBAC and Webhook at most once; one left out is not
	// asked. kcp's default is AlwaysAllowGroups, AlwaysAllowPaths, RBAC, Webhook.
	// +optional
	// +listType=atomic
	Order []string `json:"order,omitempty" protobuf:"bytes,3,rep,name=order"`
}

// AuthorizationWebhookSpec configures a webhook authorizer.
type AuthorizationWebhookSpec struct {
	// ConfigSecretName names a Secret with a kubeconfig (key kubeconfig) for the webhook.
	ConfigSecretName string `json:"configSecretName" protobuf:"bytes,1,opt,name=configSecretName"`
	// AllowPaths are HTTP paths authorized without asking the webhook.
	// +optional
	// +listType=atomic
	AllowPaths []string `json:"allowPaths,omitempty" protobuf:"bytes,2,rep,name=allowPaths"`
	// CacheAuthorizedTTL is how long an allow is cached.
	// +optional
	CacheAuthorizedTTL *metav1.Duration `json:"cacheAuthorizedTTL,omitempty" protobuf:"bytes,3,opt,name=cacheAuthorizedTTL"`
	// CacheUnauthorizedTTL is how long a deny is cached.
	// +optional
	CacheUnauthorizedTTL *metav1.Duration `json:"cacheUnauthorizedTTL,omitempty" protobuf:"bytes,4,opt,name=cacheUnauthorizedTTL"`
	// Version of SubjectAccessReview sent: v1 or v1beta1.
	// +optional
	Version string `json:"version,omitempty" protobuf:"bytes,5,opt,name=version"`
}

// ComponentSpec is what the spec of every component shares: its image, scale and resources,
// how its certificates, Deployment and Service are customized, and what is added to its pods.
type ComponentSpec struct {
	// Image overrides the kcp image.
	// +optional
	Image *ImageSpec `json:"image,omitempty" protobuf:"bytes,1,opt,name=image"`
	// Replicas is the number of pods. When unset, a new Deployment starts with 2 (a CacheServer
	// without etcd with 1) and whoever scales it afterwards, for example an HPA, owns the count.
	// +optional
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,2,opt,name=replicas"`
	// Resources of the component's container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty" protobuf:"bytes,3,opt,name=resources"`
	// CertificateTemplates customize the component's certificates, keyed by role.
	// +optional
	CertificateTemplates CertificateTemplateMap `json:"certificateTemplates,omitempty" protobuf:"bytes,4,rep,name=certificateTemplates,casttype=CertificateTemplateMap"`
	// ServiceTemplate customizes the component's Service.
	// +optional
	ServiceTemplate *ServiceTemplate `json:"serviceTemplate,omitempty" protobuf:"bytes,5,opt,name=serviceTemplate"`
	// DeploymentTemplate customizes the component's Deployment.
	// +optional
	DeploymentTemplate *DeploymentTemplate `json:"deploymentTemplate,omitempty" protobuf:"bytes,6,opt,name=deploymentTemplate"`
	// ExtraArgs are appended to the component's command line.
	// +optional
	// +listType=atomic
	ExtraArgs []string `json:"extraArgs,omitempty" protobuf:"bytes,7,rep,name=extraArgs"`
	// ExtraVolumes are added to the pod: configMap, csi, downwardAPI, emptyDir, ephemeral,
	// persistentVolumeClaim, projected or secret, the sources of Pod Security's restricted level.
	// +optional
	// +listType=atomic
	ExtraVolumes []corev1.Volume `json:"extraVolumes,omitempty" protobuf:"bytes,8,rep,name=extraVolumes"`
	// ExtraVolumeMounts are added to the component's container. Each names a volume of
	// extraVolumes.
	// +optional
	// +listType=atomic
	ExtraVolumeMounts []corev1.VolumeMount `json:"extraVolumeMounts,omitempty" protobuf:"bytes,9,rep,name=extraVolumeMounts"`
	// Logging configures logging.
	// +optional
	Logging *LoggingSpec `json:"logging,omitempty" protobuf:"bytes,10,opt,name=logging"`
}

// CommonShardSpec is what a RootShard and a Shard share.
type CommonShardSpec struct {
	ComponentSpec `json:",inline" protobuf:"bytes,1,opt,name=componentSpec"`

	// ClusterDomain is the cluster's DNS domain. Defaults to cluster.local.
	// +optional
	ClusterDomain string `json:"clusterDomain,omitempty" protobuf:"bytes,2,opt,name=clusterDomain"`
	// ShardBaseURL is an https URL that overrides the shard's in-cluster base URL.
	// +optional
	ShardBaseURL string `json:"shardBaseURL,omitempty" protobuf:"bytes,3,opt,name=shardBaseURL"`
	// Etcd is the etcd cluster the shard stores its data in. Defaults to a managed etcd.
	// +optional
	Etcd EtcdConfig `json:"etcd,omitempty" protobuf:"bytes,4,opt,name=etcd"`
	// Audit configures auditing.
	// +optional
	Audit *AuditSpec `json:"audit,omitempty" protobuf:"bytes,5,opt,name=audit"`
	// Authorization configures a webhook authorizer.
	// +optional
	Authorization *AuthorizationSpec `json:"authorization,omitempty" protobuf:"bytes,6,opt,name=authorization"`
	// Auth configures authentication.
	// +optional
	Auth *AuthSpec `json:"auth,omitempty" protobuf:"bytes,7,opt,name=auth"`
	// CABundleSecretRef names a Secret whose tls.crt is added to the server CA bundle.
	// +optional
	CABundleSecretRef *corev1.LocalObjectReference `json:"caBundleSecretRef,omitempty" protobuf:"bytes,8,opt,name=caBundleSecretRef"`
	// ClientCABundleRef names a Secret whose tls.crt is added to the client CA bundle.
	// +optional
	ClientCABundleRef *corev1.LocalObjectReference `json:"clientCABundleRef,omitempty" protobuf:"bytes,9,opt,name=clientCABundleRef"`
	// KcpVirtualWorkspace names a VirtualWorkspace in the same namespace that serves kcp's
	// virtual workspaces out of process: the shard then announces its URL instead of serving
	// them itself. It may change: the shard rolls out with the new URL.
	KcpVirtualWorkspace *corev1.LocalObjectReference `json:"kcpVirtualWorkspace,omitempty" protobuf:"bytes,10,opt,name=kcpVirtualWorkspace"`
}

// ShardReference names a Shard.
type ShardReference struct {
	// Name of the Shard.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Link is the Link a Shard of another cluster reported itself over; empty for a Shard of
	// this cluster.
	// +optional
	Link string `json:"link,omitempty" protobuf:"bytes,2,opt,name=link"`
	// Namespace is a linked Shard's namespace in its own cluster.
	// +optional
	Namespace string `json:"namespace,omitempty" protobuf:"bytes,3,opt,name=namespace"`
}
