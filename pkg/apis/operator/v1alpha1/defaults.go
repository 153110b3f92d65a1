package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

// The image every component runs unless spec.image says otherwise. The builders apply it at
// realization time rather than storing it, so that upgrading the server upgrades setups that
// did not pin an image.
const (
	DefaultImageRepository = "ghcr.io/kcp-dev/kcp"
	DefaultImageTag        = "v0.32.3"
)

// The image a managed etcd runs unless spec.etcd.managed.image says otherwise, applied by the
// builders like DefaultImageRepository.
const (
	DefaultEtcdImageRepository = "quay.io/coreos/etcd"
	DefaultEtcdImageTag        = "v3.7.0"
)

// Stored defaults.
const (
	DefaultClusterDomain           = "cluster.local"
	DefaultExternalPort      int32 = 6443
	DefaultWorkspace               = "root"
	DefaultExpirationSeconds int64 = 3600
	DefaultIssuerKind              = "Issuer"
	DefaultIssuerGroup             = "cert-manager.io"
	// DefaultOIDCCAKey and DefaultTokenAuthFileKey are kcp-operator's default Secret keys.
	DefaultOIDCCAKey        = "ca.crt"
	DefaultTokenAuthFileKey = "token.csv"
	// DefaultReplicas is the replica count a shard or front-proxy Deployment starts with
	// when spec.replicas is unset. It is not stored, so that an HPA may own the count.
	DefaultReplicas int32 = 2
	// DefaultEtcdReplicas is the member count of a managed etcd. It is stored: the count is
	// immutable, and a later change of this default must not resize running clusters.
	DefaultEtcdReplicas int32 = 3
	// DefaultEtcdStorageSize is the volume size of each managed etcd member, stored.
	DefaultEtcdStorageSize = "8Gi"
	// DefaultEtcdQuota is a managed etcd's backend quota when managed.quota is unset: etcd's
	// own default (2 GiB). Not stored, as the etcd image.
	DefaultEtcdQuota = "2Gi"
	// DefaultEtcdDefragmentationThresholdPercent and DefaultEtcdDefragmentationMinimumSize
	// say when a member is defragmented when managed.defragmentation leaves them unset.
	DefaultEtcdDefragmentationThresholdPercent int32 = 50
	DefaultEtcdDefragmentationMinimumSize            = "64Mi"
	// DefaultEtcdBackupRetention is how many snapshots a store keeps, stored.
	DefaultEtcdBackupRetention int32 = 7
)

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

// SetDefaults_CommonShardSpec sets the defaults shared by RootShards and Shards.
func SetDefaults_CommonShardSpec(obj *CommonShardSpec) {
	if obj.ClusterDomain == "" {
		obj.ClusterDomain = DefaultClusterDomain
	}
	if len(obj.Etcd.Endpoints) == 0 && obj.Etcd.Managed == nil {
		obj.Etcd.Managed = &ManagedEtcd{}
	}
}

// SetDefaults_ManagedEtcd defaults the member count and the volume size of a managed etcd.
func SetDefaults_ManagedEtcd(obj *ManagedEtcd) {
	if obj.Replicas == nil {
		v := DefaultEtcdReplicas
		obj.Replicas = &v
	}
	if obj.Storage == nil {
		obj.Storage = &EtcdStorage{}
	}
	if obj.Storage.VolumeSize == nil {
		q := resource.MustParse(DefaultEtcdStorageSize)
		obj.Storage.VolumeSize = &q
	}
}

// SetDefaults_EtcdBackup defaults the retention and the store (a volume) of a backup.
func SetDefaults_EtcdBackup(obj *EtcdBackup) {
	if obj.Retention == nil {
		v := DefaultEtcdBackupRetention
		obj.Retention = &v
	}
	if obj.Store.Volume == nil && obj.Store.S3 == nil {
		obj.Store.Volume = &EtcdSnapshotVolume{}
	}
}

// SetDefaults_EtcdDefragmentation defaults when a member is defragmented. Not stored on a
// managed etcd without the field: the builders and the controller apply the same defaults.
func SetDefaults_EtcdDefragmentation(obj *EtcdDefragmentation) {
	if obj.ThresholdPercent == nil {
		v := DefaultEtcdDefragmentationThresholdPercent
		obj.ThresholdPercent = &v
	}
	if obj.MinimumSize == nil {
		q := resource.MustParse(DefaultEtcdDefragmentationMinimumSize)
		obj.MinimumSize = &q
	}
}

// SetDefaults_ExternalConfig defaults the external port.
func SetDefaults_ExternalConfig(obj *ExternalConfig) {
	if obj.Port == 0 {
		obj.Port = DefaultExternalPort
	}
}

// SetDefaults_CacheServerSpec defaults the cluster domain of a CacheServer.
func SetDefaults_CacheServerSpec(obj *CacheServerSpec) {
	if obj.ClusterDomain == "" {
		obj.ClusterDomain = DefaultClusterDomain
	}
}

// SetDefaults_ObjectReference defaults an issuer reference to a cert-manager Issuer.
func SetDefaults_ObjectReference(obj *ObjectReference) {
	if obj.Kind == "" {
		obj.Kind = DefaultIssuerKind
	}
	if obj.Group == "" {
		obj.Group = DefaultIssuerGroup
	}
}

// SetDefaults_KubeconfigSpec defaults the workspace of a Kubeconfig.
func SetDefaults_KubeconfigSpec(obj *KubeconfigSpec) {
	if obj.TargetWorkspace == "" {
		obj.TargetWorkspace = DefaultWorkspace
	}
}

// SetDefaults_KubeconfigRequestSpec defaults the lifetime and workspace of a request.
func SetDefaults_KubeconfigRequestSpec(obj *KubeconfigRequestSpec) {
	if obj.ExpirationSeconds == nil {
		v := DefaultExpirationSeconds
		obj.ExpirationSeconds = &v
	}
	if obj.Workspace == "" {
		obj.Workspace = DefaultWorkspace
	}
}

// SetDefaults_OIDCConfiguration defaults the key of the issuer's CA bundle, as kcp-operator does.
func SetDefaults_OIDCConfiguration(obj *OIDCConfiguration) {
	if obj.CAFileRef != nil && obj.CAFileRef.Key == "" {
		obj.CAFileRef.Key = DefaultOIDCCAKey
	}
}

// SetDefaults_TokenAuthFileSpec defaults the key of a static token file, as kcp-operator does.
func SetDefaults_TokenAuthFileSpec(obj *TokenAuthFileSpec) {
	if obj.Key == "" {
		obj.Key = DefaultTokenAuthFileKey
	}
}

// SetDefaults_ComponentSpec defaults the issuer references of the certificate templates,
// which the generated defaulters do not reach inside a map. The map's values share their
// Spec and IssuerRef pointers with the object, so defaulting through a copy sticks.
func SetDefaults_ComponentSpec(obj *ComponentSpec) {
	for _, t := range obj.CertificateTemplates {
		if t.Spec != nil && t.Spec.IssuerRef != nil {
			SetDefaults_ObjectReference(t.Spec.IssuerRef)
		}
	}
}

// SetDefaults_VirtualWorkspaceSpec defaults the cluster domain of a VirtualWorkspace.
func SetDefaults_VirtualWorkspaceSpec(obj *VirtualWorkspaceSpec) {
	if obj.ClusterDomain == "" {
		obj.ClusterDomain = DefaultClusterDomain
	}
}
