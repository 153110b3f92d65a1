package v1alpha1

// The conditions of our kinds, each with its reasons. The types and the reasons are part of
// the API: keep them stable.

// ConditionSynced is whether the last reconcile wrote what it had to the host cluster. It
// is False, with a reason such as Forbidden or TooManyRequests, while the host cluster
// refuses the writes, and turns True by itself once they go through again.
const ConditionSynced = "Synced"

// The reasons of the Synced condition, and of the Warning Event of a failed reconcile. A
// failure's reason says what kind of refusal it was, so that a user (or an alert) tells a
// missing RBAC rule from an overloaded or unreachable host cluster without reading the
// message.
const (
	// ReasonReconciled is Synced=True: the last reconcile wrote what it had to.
	ReasonReconciled = "Reconciled"
	// ReasonForbidden: the host cluster's RBAC denies the server a verb on a resource.
	ReasonForbidden = "Forbidden"
	// ReasonUnauthorized: the host cluster does not accept the server's credentials.
	ReasonUnauthorized = "Unauthorized"
	// ReasonTooManyRequests: API priority and fairness, or --max-requests-inflight, throttled us.
	ReasonTooManyRequests = "TooManyRequests"
	// ReasonTimeout: the host cluster did not answer in time.
	ReasonTimeout = "Timeout"
	// ReasonConflict: someone else wrote the object between our read and our write.
	ReasonConflict = "Conflict"
	// ReasonInvalid: the host cluster refused an object as invalid (a webhook or a policy).
	ReasonInvalid = "Invalid"
	// ReasonHostUnavailable: the host cluster is unreachable or failing.
	ReasonHostUnavailable = "HostUnavailable"
	// ReasonReconcileFailed is any other failure.
	ReasonReconcileFailed = "ReconcileFailed"
	// ReasonNameConflict: an object of the name a setup derives exists and was not created
	// by it. The server never writes, adopts or deletes such an object; the setup waits until
	// it is gone, or is renamed.
	ReasonNameConflict = "NameConflict"
)

// The condition types every setup reports.
const (
	ConditionAvailable         = "Available"
	ConditionCertificatesReady = "CertificatesReady"
	ConditionReferenceValid    = "ReferenceValid"
)

// The reasons of the Available condition.
const (
	ReasonDeploymentNotFound  = "DeploymentNotFound"
	ReasonReplicasUnavailable = "ReplicasUnavailable"
	ReasonReplicasAvailable   = "ReplicasAvailable"
	// ReasonDeleting: the object is being deleted.
	ReasonDeleting = "Deleting"
)

// The reasons of a Kubeconfig's Available condition, and of its CertificatesReady condition
// when it is Failed.
const (
	// ReasonKubeconfigWritten: the kubeconfig Secret holds the current certificate.
	ReasonKubeconfigWritten = "KubeconfigWritten"
	// ReasonCertificatePending: cert-manager has not issued the certificate yet.
	ReasonCertificatePending = "CertificatePending"
	// ReasonCABundlePending: the RootShard's server CA bundle is not written yet.
	ReasonCABundlePending = "CABundlePending"
	// ReasonSecretConflict: spec.secretRef.name names a Secret that is someone else's.
	ReasonSecretConflict = "SecretConflict"
)

// The reasons of the CertificatesReady condition.
const (
	ReasonCertificatesIssued  = "CertificatesIssued"
	ReasonCertificatesPending = "CertificatesPending"
	// ReasonCertManagerNotInstalled: the host cluster does not serve cert-manager's API
	// (CertificatesReady=False; Synced=False too, since nothing was written).
	ReasonCertManagerNotInstalled = "CertManagerNotInstalled"
)

// The reasons of the ReferenceValid condition.
const (
	ReasonReferencesFound     = "ReferencesFound"
	ReasonRootShardNotFound   = "RootShardNotFound"
	ReasonShardNotFound       = "ShardNotFound"
	ReasonFrontProxyNotFound  = "FrontProxyNotFound"
	ReasonCacheServerNotFound = "CacheServerNotFound"
	// ReasonReferenceSecretNotFound: the Secret a secretRef names is not there (yet).
	ReasonReferenceSecretNotFound = "ReferenceSecretNotFound"
	// ReasonReferenceSecretInvalid: the Secret is there but is not a well-formed reference
	// Secret of the expected kind (the message names the key at fault).
	ReasonReferenceSecretInvalid = "ReferenceSecretInvalid"
	// ReasonReferenceSecretNotLabelled: a secretRef's Secret is there but has no label
	// operator.kcp.io/reference, by which the server caches the copies; the message names the
	// Secret and the kubectl label command that heals it.
	ReasonReferenceSecretNotLabelled = "ReferenceSecretNotLabelled"
	// ReasonCABundleSecretNotFound: a caBundleSecretRef's or clientCABundleRef's Secret is not
	// there; Synced says so too, since nothing of the object was realized by that reconcile.
	ReasonCABundleSecretNotFound = "CABundleSecretNotFound"
	// ReasonVirtualWorkspaceNotFound and ReasonVirtualWorkspaceTargetMismatch are about the
	// VirtualWorkspace a root shard or shard names, or a FrontProxy's path mapping names: not
	// there, or serving another target.
	ReasonVirtualWorkspaceNotFound       = "VirtualWorkspaceNotFound"
	ReasonVirtualWorkspaceTargetMismatch = "VirtualWorkspaceTargetMismatch"
)

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

// ConditionAuthorizationProvisioned is whether the ClusterRoleBindings of a Kubeconfig's
// spec.authorization are in place in kcp. It is present only while spec.authorization is
// set or its bindings are being removed; its reasons follow. It says nothing about
// the host cluster: Synced does.
const ConditionAuthorizationProvisioned = "AuthorizationProvisioned"

// The reasons of a Kubeconfig's AuthorizationProvisioned condition. It shares
// ReasonWaitingForCredentials, ReasonKcpUnreachable, ReasonKcpRefused and ReasonNoKcpDialer
// with KcpReady; for it, KcpUnreachable also covers a 429 and a server without a client for
// kcp, and KcpRefused any 4xx: the workspace does not exist, or the server's identity may not
// manage ClusterRoleBindings there.
const (
	// ReasonProvisioned (True): the workspace holds one ClusterRoleBinding per ClusterRole of
	// spec.authorization, for the group kubeconfig:<name>, and no other of the Kubeconfig's.
	ReasonProvisioned = "Provisioned"
	// ReasonProvisioning: the workspace is recorded in status.authorization.provisionedCluster;
	// the bindings are created next.
	ReasonProvisioning = "Provisioning"
	// ReasonWaitingForTarget: the target, or its RootShard, does not exist yet.
	ReasonWaitingForTarget = "WaitingForTarget"
	// ReasonNoKcpIdentity: the target is a RootShard named by a reference Secret, toward
	// whose kcp the server has no identity to bind with. Validation refuses such a spec; this
	// is for one stored before it did.
	ReasonNoKcpIdentity = "NoKcpIdentity"
	// ReasonRootShardUnknown: the Kubeconfig is being deleted, its target Shard or FrontProxy
	// is gone, and RootShards remain: which kcp holds the bindings cannot be told.
	ReasonRootShardUnknown = "RootShardUnknown"
)

// ConditionKcpReady is whether the component's kcp itself answers ready: its /readyz
// answers 200 and, for a Shard, kcp's Shard object of the same name exists in the root
// workspace. It is polled while the Deployment is Available; Available stays the
// Deployment's.
const ConditionKcpReady = "KcpReady"

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

// ConditionEtcdReady is whether a RootShard's or Shard's managed etcd (spec.etcd.managed)
// serves: its StatefulSet has every member ready, and etcd's own /health, asked on the
// client port with kcp's client certificate, says so. It is absent with external etcd
// endpoints, which are not the server's to watch.
const ConditionEtcdReady = "EtcdReady"

// The reasons of the EtcdReady condition. They are part of the API: keep them stable.
const (
	// ReasonEtcdHealthy is EtcdReady=True: every member is ready and /health answers true.
	ReasonEtcdHealthy = "Healthy"
	// ReasonStatefulSetNotFound: the StatefulSet does not exist yet (its certificates are
	// not issued, or it is being created).
	ReasonStatefulSetNotFound = "StatefulSetNotFound"
	// ReasonMembersNotReady: fewer members are ready than the StatefulSet wants.
	ReasonMembersNotReady = "MembersNotReady"
	// ReasonEtcdUnhealthy: etcd answered /health with something else than health true (no
	// leader, an alarm); the message says what.
	ReasonEtcdUnhealthy = "Unhealthy"
	// ReasonEtcdUnreachable: etcd did not answer /health (no connection, TLS, a timeout).
	ReasonEtcdUnreachable = "EtcdUnreachable"
	// ReasonEtcdChecking: every member is ready and etcd is being asked for the first time.
	ReasonEtcdChecking = "Checking"
	// ReasonAlarmNoSpace: a member raised etcd's NOSPACE alarm (its database reached the
	// quota) and the cluster refuses writes; the server compacts, defragments the members one
	// at a time and disarms it once every member's database is below the quota.
	ReasonAlarmNoSpace = "AlarmNoSpace"
	// ReasonAlarmCorrupt: a member raised etcd's CORRUPT alarm (its data differs from the
	// others'). The server never disarms it: a corrupted member needs a human.
	ReasonAlarmCorrupt = "AlarmCorrupt"
)

// ConditionEtcdRestored says where a restore of a managed etcd from a snapshot
// (spec.etcd.managed.restore) stands: the snapshot is checked in its store before the
// StatefulSet is created from it, the members restore it into their empty data directories
// before etcd starts, and the condition turns True once every member is ready. It is absent
// without spec.etcd.managed.restore.
const ConditionEtcdRestored = "EtcdRestored"

// The reasons of the EtcdRestored condition. They are part of the API: keep them stable.
const (
	// ReasonRestoreVerifying: the snapshot's hash is being checked in its store; nothing is
	// created until it passes.
	ReasonRestoreVerifying = "Verifying"
	// ReasonSnapshotNotFound: the store holds no snapshot of that name; nothing is created.
	ReasonSnapshotNotFound = "SnapshotNotFound"
	// ReasonSnapshotCorrupt: the snapshot fails etcd's hash check; nothing starts from it.
	ReasonSnapshotCorrupt = "SnapshotCorrupt"
	// ReasonRestoreSourceUnavailable: the store could not be asked (the backup agent does not
	// answer yet); the check is retried.
	ReasonRestoreSourceUnavailable = "SourceUnavailable"
	// ReasonRestoring: the StatefulSet was created from the snapshot and its members are
	// restoring it or starting.
	ReasonRestoring = "Restoring"
	// ReasonRestored is EtcdRestored=True: every member started from the snapshot.
	ReasonRestored = "Restored"
	// ReasonRestoreNotApplied: the StatefulSet existed already, so its members keep their
	// data; a restore applies only when the StatefulSet is created.
	ReasonRestoreNotApplied = "NotApplied"
)

// ConditionCARotation says where the rotations of an object's CAs stand (docs/rotation.md):
// True with ReasonWaitingForComplete when a rotation is Prepared and waits for Complete, False
// with ReasonRotating while one is Preparing or Completing. It is absent when none runs.
const ConditionCARotation = "CARotation"

// The reasons of the CARotation condition.
const (
	ReasonWaitingForComplete = "WaitingForComplete"
	ReasonRotating           = "Rotating"
)

// ConditionTakenOver records that an object with the annotation operator.kcp.io/adopt:
// kcp-operator (AnnotationAdopt) took over what kcp-operator made for it: set True once the
// object is first Available, its lastTransitionTime saying when. From then on the annotation
// has no effect: a takeover happens once, while the object is first realized.
const ConditionTakenOver = "TakenOver"

// ReasonTakenOverFromKcpOperator is TakenOver's reason.
const ReasonTakenOverFromKcpOperator = "TakenOverFromKcpOperator"

// ConditionLinkReady, on a Link, is whether the remote it declares may connect: its
// credentials are issued and its bootstrap Secret written. Until the Link's controller
// reports it, `kubectl get links` shows Unknown.
const ConditionLinkReady = "Ready"

// The reasons of a Link's Ready condition.
const (
	// ReasonLinkReady is Ready=True: the Link's client certificate is issued and its
	// bootstrap Secret written.
	ReasonLinkReady = "BootstrapWritten"
	// ReasonLinkCertificatesNotReady: the RootShard's link CA or the Link's client
	// certificate is not issued yet. (ReasonRootShardNotFound: the RootShard does not exist.)
	ReasonLinkCertificatesNotReady = "CertificatesNotReady"
	// ReasonLinkListenerNotServed: this server does not serve the link listener, so no
	// bootstrap Secret can say where it is.
	ReasonLinkListenerNotServed = "ListenerNotServed"
)

// ConditionConsumerLinkReady, on a Shard, FrontProxy or Kubeconfig joined over a link
// (spec.rootShard.link, spec.target.rootShardLink), is whether this server holds the link to
// the RootShard's cluster: its stream connected. False keeps what is realized as it is: the
// consumer serves with the bundles last received (docs/links.md).
const ConditionConsumerLinkReady = "LinkReady"

// The reasons of a linked consumer's LinkReady and ReferenceValid conditions.
const (
	// ReasonLinkStateUnknown: this server does not run the link's client, so nothing says
	// whether the link is up.
	ReasonLinkStateUnknown = "LinkStateUnknown"
	// ReasonLinkConnected (LinkReady=True): the link's bundle stream is open.
	ReasonLinkConnected = "Connected"
	// ReasonLinkDisconnected (LinkReady=False): the link is down (the listener unreachable
	// or refusing, the bootstrap Secret unusable), or not connected yet; what it realized
	// stays.
	ReasonLinkDisconnected = "Disconnected"
	// ReasonLinkNotHeld (LinkReady=False): this server holds no link of the bootstrap Secret
	// yet.
	ReasonLinkNotHeld = "LinkNotHeld"
	// ReasonLinkBundlesNotReceived (ReferenceValid=False): the bundles Secret of the
	// bootstrap Secret (<bootstrap>-bundles) is not there yet: nothing was received over the
	// link.
	ReasonLinkBundlesNotReceived = "LinkBundlesNotReceived"
	// ReasonLinkNamesNoCacheServer (ReferenceValid=False): a Shard's spec.cache.link names a
	// link whose bundles hold no cache-client data: its Link names no CacheServer
	// (spec.cacheServerRef).
	ReasonLinkNamesNoCacheServer = "LinkNamesNoCacheServer"
)

// ConditionUpgrading, on a RootShard with spec.version, is whether its setup rolls to another
// kcp release, group by group (docs/kcp-versions.md, "Upgrading a setup"). It is absent
// without spec.version.
const ConditionUpgrading = "Upgrading"

// The reasons of the Upgrading condition. They are part of the API: keep them stable.
const (
	// ReasonUpgradeRolling (True): a group rolls; the message names it and what it waits for.
	ReasonUpgradeRolling = "Rolling"
	// ReasonUpgradeHalted (False): the rolling group did not finish within
	// spec.upgrade.progressDeadlineSeconds; the message names the component and why. Nothing
	// further changes; the roll goes on by itself once the component is ready.
	ReasonUpgradeHalted = "Halted"
	// ReasonUpgradePaused (False): spec.upgrade.paused holds the roll before its next group.
	ReasonUpgradePaused = "Paused"
	// ReasonUpToDate (False): no roll is under way; every component is at status.version.current.
	ReasonUpToDate = "UpToDate"
)

// ConditionEtcdBackupReady is whether a managed etcd's backup (spec.etcd.managed.backup) can
// take snapshots: its backup agent is realized and available. It is absent without a backup.
// False reasons: AgentImageMissing, and the Deployment's own (DeploymentNotFound,
// ReplicasUnavailable); True: ReplicasAvailable.
const ConditionEtcdBackupReady = "EtcdBackupReady"

// ReasonAgentImageMissing is EtcdBackupReady=False: the server runs without
// --etcd-agent-image, so no backup agent is realized and no snapshot is taken.
const ReasonAgentImageMissing = "AgentImageMissing"

// The Events of a snapshot's take, on the owner of the managed etcd: SnapshotTaken, and
// Warning SnapshotFailed, whose message for an on-demand snapshot is SnapshotFailedMessage
// (kubectl kcp-setups backup --wait reads it).
const (
	EventSnapshotTaken  = "SnapshotTaken"
	EventSnapshotFailed = "SnapshotFailed"
	// SnapshotFailedMessage is the message of an on-demand snapshot's SnapshotFailed Event,
	// with its name and the error.
	SnapshotFailedMessage = "Taking snapshot %s failed: %v"
)
