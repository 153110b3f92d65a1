package pki

// The names by which a kcp server (a RootShard's or a Shard's) and a RootShard's internal
// front proxy are reached in the host cluster, as kcp-operator names them: the builders
// write their Services, pods and Secrets under these names, and the server reaches kcp
// through them (pkg/kcpclient), without knowing the builders.

// The owner label kinds of the kcp servers.
const (
	RootShardKind = "rootshard"
	ShardKind     = "shard"
)

// KcpSecurePort is the port kcp serves on, in its pod and on its Service.
const KcpSecurePort = 6443

// KcpComponent is the component label of a kcp server's pods, in its Deployment's selector.
const KcpComponent = "kcp"

// RootShardProxyComponent is the component label of a RootShard's internal front proxy's
// objects, and kcp-operator's.
const RootShardProxyComponent = "rootshard-proxy"

// RootShardServiceName is the name of a root shard's Service and Deployment, and the base of
// its DNS names.
func RootShardServiceName(rootShard string) string { return rootShard + "-kcp" }

// ShardServiceName is the name of a shard's Service and Deployment, and the base of its DNS
// names.
func ShardServiceName(shard string) string { return shard + "-shard-kcp" }

// ServerSecretName is the Secret of the serving certificate of the kcp server of the root
// shard or shard named owner.
func ServerSecretName(owner string) string { return owner + "-server" }

// KcpSelector selects the pods of the kcp server of the object name of kind (RootShardKind
// or ShardKind).
func KcpSelector(kind, name string) map[string]string {
	return map[string]string{LabelInstance: name, LabelComponent: KcpComponent, OwnerLabel(kind): name}
}

// RootShardProxyServiceName is the name of a RootShard's internal front proxy's Service and
// Deployment.
func RootShardProxyServiceName(rootShard string) string { return rootShard + "-proxy" }

// RootShardProxyServerSecretName is the Secret of the serving certificate of a RootShard's
// internal front proxy.
func RootShardProxyServerSecretName(rootShard string) string { return rootShard + "-proxy-server" }

// RootShardProxySelector selects the pods of a RootShard's internal front proxy, and not the
// root shard's.
func RootShardProxySelector(rootShard string) map[string]string {
	return map[string]string{LabelInstance: rootShard, LabelComponent: RootShardProxyComponent, OwnerLabel(RootShardKind): rootShard}
}

// The server's own identity toward a root shard's kcp, as kcp-operator names and issues it:
// a client certificate of the root shard's client CA, in a Secret no pod mounts. kcp's
// bootstrap policy binds the group system:kcp:admin to cluster-admin in every workspace
// ("system:kcp:admin:cluster-admin" in kcp's bootstrap policy), and kcp's front proxy passes
// it on, where it drops system:masters.
const (
	OperatorRole       = "kcp-operator"
	OperatorCommonName = "system:kcp-operator"
	OperatorGroup      = "system:kcp:admin"
)

// OperatorSecretName is the Secret (and Certificate) of the server's identity toward the
// root shard named rootShard.
func OperatorSecretName(rootShard string) string { return rootShard + "-" + OperatorRole }
