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

// AnnotationDeleteEtcdVolumes, set to "true" on a RootShard or Shard with a managed etcd,
// deletes the etcd members' PersistentVolumeClaims with it. Without it they are kept, so
// that deleting a setup by mistake does not lose its data.
const AnnotationDeleteEtcdVolumes = "operator.kcp.io/delete-etcd-volumes"

// ConditionAuthorizationProvisioned is whether the ClusterRoleBindings of a Kubeconfig's
// spec.authorization are in place in kcp. It is present only while spec.authorization is
// set or its bindings are being removed; its reasons are the Kubeconfig controller's
// (ReasonProvisioned and the others in pkg/controller/kubeconfig). It says nothing about
// the host cluster: Synced does.
const ConditionAuthorizationProvisioned = "AuthorizationProvisioned"

// ConditionKcpReady is whether the component's kcp itself answers ready: its /readyz
// answers 200 and, for a Shard, kcp's Shard object of the same name exists in the root
// workspace. It is polled while the Deployment is Available; Available stays the
// Deployment's.
const ConditionKcpReady = "KcpReady"

// ConditionRootShard, on a Shard or FrontProxy, is kcp-operator's condition of the same name:
// True with reason Valid once the RootShard it references exists (or the copy of its join
// Secret is usable), False with reason InvalidReference until then, as kcp-operator sets it,
// so that `kubectl wait --for=condition=RootShard` written for kcp-operator returns.
// ReferenceValid says more: which reference, and why.
const ConditionRootShard = "RootShard"

// kcp-operator's reasons of ConditionRootShard.
const (
	ReasonRootShardValid            = "Valid"
	ReasonRootShardInvalidReference = "InvalidReference"
)

// ConditionDeregistered, on a Shard being deleted, is whether kcp's Shard object of the same
// name is gone from the root workspace. While it is False the Shard stays in Deleting and
// its workloads stay up.
const ConditionDeregistered = "Deregistered"

// The reasons of the KcpReady and Deregistered conditions. They are part of the API: keep
// them stable.
const (
	// ReasonKcpReady is KcpReady=True: /readyz answered 200 (and the Shard is registered).
	ReasonKcpReady = "Ready"
	// ReasonKcpNotReady: /readyz answered another status; the message has its failing checks.
	ReasonKcpNotReady = "NotReady"
	// ReasonKcpUnreachable: kcp did not answer (no connection, a timeout) or answered 5xx.
	ReasonKcpUnreachable = "KcpUnreachable"
	// ReasonKcpRefused: kcp refused the server's identity (401 or 403).
	ReasonKcpRefused = "KcpRefused"
	// ReasonWaitingForCredentials: the server's own identity toward kcp, or the CA that
	// verifies kcp, is not issued yet.
	ReasonWaitingForCredentials = "WaitingForCredentials"
	// ReasonShardNotRegistered: kcp's root workspace has no Shard object of the Shard's name,
	// or one that routes elsewhere.
	ReasonShardNotRegistered = "ShardNotRegistered"
	// ReasonWaitingForDeployment: kcp is not asked while the Deployment is not Available.
	ReasonWaitingForDeployment = "WaitingForDeployment"
	// ReasonKcpChecking: the Deployment is Available and kcp is being asked for the first time.
	ReasonKcpChecking = "Checking"
	// ReasonDeregistered is Deregistered=True: kcp's Shard object is deleted, or was not there.
	ReasonDeregistered = "Deregistered"
	// ReasonNoKcpDialer: the server is told that no kcp can be reached from it
	// (--kcp-dialer=none): KcpReady, EtcdReady, Deregistered and AuthorizationProvisioned are
	// Unknown, and what it would clean up in kcp is left there.
	ReasonNoKcpDialer = "NoKcpDialer"
)

// AnnotationAdopt, set to AdoptKcpOperator on a setup, has the server take over what
// kcp-operator made for an object of the same kind and name in the namespace: its Issuers,
// Certificates and their Secrets (so the CAs keep their keys), Deployments, Services and
// ConfigMaps. Without it, such an object is a NameConflict and is never touched.
const AnnotationAdopt = "operator.kcp.io/adopt"

// AdoptKcpOperator is the one value of AnnotationAdopt.
const AdoptKcpOperator = "kcp-operator"
