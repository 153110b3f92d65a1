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

// ConditionSynced is whether the last reconcile wrote what it had to the host cluster. It
// is False, with a reason such as Forbidden or TooManyRequests, while the host cluster
// refuses the writes, and turns True by itself once they go through again.
const ConditionSynced = "Synced"

// The condition types every setup reports.
const (
	ConditionAvailable         = "Available"
	ConditionCertificatesReady = "CertificatesReady"
	ConditionReferenceValid    = "ReferenceValid"
)

// AnnotationSkipKcpCleanup, set to "true" on a Shard or Kubeconfig that is being deleted,
// lets it go without undoing what it made in kcp (its Shard object, its bindings): for an
// admin whose kcp is gone for good. Without it, deletion waits until kcp answers.
const AnnotationSkipKcpCleanup = "operator.kcp.io/skip-kcp-cleanup"

// ConditionAuthorizationProvisioned is whether the ClusterRoleBindings of a Kubeconfig's
// spec.authorization are in place in kcp. It is present only while spec.authorization is
// set or its bindings are being removed; its reasons are the Kubeconfig controller's
// (ReasonProvisioned and the others in pkg/controller/kubeconfig). It says nothing about
// the host cluster: Synced does.
const ConditionAuthorizationProvisioned = "AuthorizationProvisioned"
