package v1alpha1

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
)
