package v1alpha1

// Phase is the lifecycle phase of a RootShard, Shard, FrontProxy or CacheServer.
type Phase string

// The phases of a setup.
const (
	PhaseProvisioning Phase = "Provisioning"
	PhaseRunning      Phase = "Running"
	PhaseDeleting     Phase = "Deleting"
)

// KubeconfigPhase is the lifecycle phase of a Kubeconfig.
type KubeconfigPhase string

// The phases of a Kubeconfig.
const (
	KubeconfigPhaseProvisioning KubeconfigPhase = "Provisioning"
	KubeconfigPhaseReady        KubeconfigPhase = "Ready"
	KubeconfigPhaseFailed       KubeconfigPhase = "Failed"
)

// AnnotationSkipKcpCleanup, set to "true" on a Shard or Kubeconfig that is being deleted,
// lets it go without undoing what it made in kcp (its Shard object, its bindings): for an
// admin whose kcp is gone for good. Without it, deletion waits until kcp answers.
const AnnotationSkipKcpCleanup = "operator.kcp.io/skip-kcp-cleanup"

// AnnotationDeleteEtcdVolumes, set to "true" on a RootShard or Shard with a managed etcd,
// deletes the etcd members' PersistentVolumeClaims with it: those of the StatefulSet's claim
// names that carry the owner's UID. Setting it needs delete on persistentvolumeclaims in the
// namespace. Without it they are kept, so that deleting a setup by mistake does not lose its
// data.
const AnnotationDeleteEtcdVolumes = "operator.kcp.io/delete-etcd-volumes"

// AnnotationAdopt, set to AdoptKcpOperator on a setup, has the server take over what
// kcp-operator made for an object of the same kind and name in the namespace: its Issuers,
// Certificates and their Secrets (so the CAs keep their keys), Deployments, Services and
// ConfigMaps. Without it, such an object is a NameConflict and is never touched.
const AnnotationAdopt = "operator.kcp.io/adopt"

// AdoptKcpOperator is the one value of AnnotationAdopt.
const AdoptKcpOperator = "kcp-operator"
