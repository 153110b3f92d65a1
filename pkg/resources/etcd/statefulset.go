package etcd

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// Where things are in a member's container.
const (
	dataVolume    = "data"
	dataMountPath = "/var/lib/etcd"
	// dataDir is below the volume's root, so that etcd creates it with the mode it wants.
	dataDir      = dataMountPath + "/data"
	serverTLSDir = "/etc/etcd/tls/server"
	peerTLSDir   = "/etc/etcd/tls/peer"
	// The CAs the members trust, each alone: the ca.crt cert-manager writes next to a leaf is
	// the root of its chain, which may be the namespace's bootstrap CA, shared by every
	// RootShard of the namespace, and would let in another RootShard's certificates.
	clientTrustDir = "/etc/etcd/tls/client-trust"
	peerTrustDir   = "/etc/etcd/tls/peer-trust"
	containerName  = "etcd"
)

// nonRootID is the user, group and fsGroup the members run as: the distroless images'
// "nonroot", so that the volume is writable without running as root.
const nonRootID int64 = 65532

// Port names of a member.
const (
	clientPortName = "client"
	peerPortName   = "peer"
)

// MountedSecrets are the Secrets the members mount, sorted: their resource versions make the
// secrets hash, whose change rolls the members.
func (c *Cluster) MountedSecrets() []string {
	names := []string{ClientTrustSecret(c.RootShard), c.PeerSecret(), PeerTrustSecret(c.RootShard), c.ServerSecret()}
	if r := c.Restoring; r != nil && r.ClientSecret != "" {
		// The restore from another setup's agent waits for its client certificate.
		names = append(names, r.ClientSecret, r.SourceTrust)
	}
	slices.Sort(names)
	return names
}

// ClientTrustSecret is the Secret whose tls.crt is a RootShard's etcd client CA alone, which
// its managed etcd clusters trust clients by; PeerTrustSecret is the etcd peer CA's.
func ClientTrustSecret(rootShard string) string { return rootShard + "-etcd-client-trust" }

// PeerTrustSecret is the Secret whose tls.crt is a RootShard's etcd peer CA alone.
func PeerTrustSecret(rootShard string) string { return rootShard + "-etcd-peer-trust" }

// Args are a member's etcd flags. kubelet expands $(POD_NAME).
func (c *Cluster) Args() []string {
	self := c.memberHost("$(POD_NAME)")
	members := make([]string, 0, c.Replicas())
	for i := range c.Replicas() {
		members = append(members, fmt.Sprintf("%s=https://%s:%d", c.MemberName(i), c.memberHost(c.MemberName(i)), PeerPort))
	}
	args := []string{
		"--name=$(POD_NAME)",
		"--data-dir=" + dataDir,
		fmt.Sprintf("--listen-peer-urls=https://0.0.0.0:%d", PeerPort),
		fmt.Sprintf("--listen-client-urls=https://0.0.0.0:%d", ClientPort),
		// Metrics and health in plain HTTP, so on loopback only: nothing off the pod reads
		// them without a port-forward, which needs the host's pods/portforward right.
		fmt.Sprintf("--listen-metrics-urls=http://127.0.0.1:%d", MetricsPort),
		fmt.Sprintf("--advertise-client-urls=https://%s:%d", self, ClientPort),
		fmt.Sprintf("--initial-advertise-peer-urls=https://%s:%d", self, PeerPort),
		"--initial-cluster=" + strings.Join(members, ","),
		// Only read when the data directory is empty: a restarted member rejoins from its data.
		"--initial-cluster-state=new",
		"--initial-cluster-token=" + c.Namespace + "." + c.Name(),
		"--client-cert-auth=true",
		"--trusted-ca-file=" + clientTrustDir + "/tls.crt",
		"--cert-file=" + serverTLSDir + "/tls.crt",
		"--key-file=" + serverTLSDir + "/tls.key",
		"--peer-client-cert-auth=true",
		"--peer-trusted-ca-file=" + peerTrustDir + "/tls.crt",
		"--peer-cert-file=" + peerTLSDir + "/tls.crt",
		"--peer-key-file=" + peerTLSDir + "/tls.key",
		"--auto-compaction-mode=periodic",
		"--auto-compaction-retention=5m",
	}
	// Without managed.quota, etcd's own default applies (DefaultEtcdQuota says which), and
	// the members' args stay as they were before the field.
	if q := c.Spec.Quota; q != nil {
		args = append(args, fmt.Sprintf("--quota-backend-bytes=%d", q.Value()))
	}
	return args
}

// Quota is the members' backend quota in bytes: managed.quota, or etcd's default.
func (c *Cluster) Quota() int64 {
	if q := c.Spec.Quota; q != nil {
		return q.Value()
	}
	q := resource.MustParse(operatorv1alpha1.DefaultEtcdQuota)
	return q.Value()
}

// StatefulSet builds the members' StatefulSet. secretsHash is workload.SecretsHash of the
// MountedSecrets' versions.
func (c *Cluster) StatefulSet(secretsHash string) *appsv1ac.StatefulSetApplyConfiguration {
	spec := c.Spec
	container := corev1ac.Container().WithName(containerName).
		WithImage(workload.ImageOr(spec.Image, operatorv1alpha1.DefaultEtcdImageRepository, operatorv1alpha1.DefaultEtcdImageTag)).
		WithCommand("etcd").WithArgs(c.Args()...).
		WithEnv(corev1ac.EnvVar().WithName("POD_NAME").WithValueFrom(corev1ac.EnvVarSource().
			WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath("metadata.name")))).
		WithPorts(
			corev1ac.ContainerPort().WithName(clientPortName).WithContainerPort(ClientPort).WithProtocol(corev1.ProtocolTCP),
			corev1ac.ContainerPort().WithName(peerPortName).WithContainerPort(PeerPort).WithProtocol(corev1.ProtocolTCP)).
		WithVolumeMounts(
			corev1ac.VolumeMount().WithName("server-tls").WithMountPath(serverTLSDir).WithReadOnly(true),
			corev1ac.VolumeMount().WithName("peer-tls").WithMountPath(peerTLSDir).WithReadOnly(true),
			corev1ac.VolumeMount().WithName("client-trust").WithMountPath(clientTrustDir).WithReadOnly(true),
			corev1ac.VolumeMount().WithName("peer-trust").WithMountPath(peerTrustDir).WithReadOnly(true),
			corev1ac.VolumeMount().WithName(dataVolume).WithMountPath(dataMountPath)).
		WithSecurityContext(workload.SecurityContext())
	probes(container)
	workload.Resources(container, spec.Resources, workload.Etcd)

	podSpec := corev1ac.PodSpec().
		WithContainers(container).
		WithVolumes(
			corev1ac.Volume().WithName("server-tls").WithSecret(corev1ac.SecretVolumeSource().WithSecretName(c.ServerSecret())),
			corev1ac.Volume().WithName("peer-tls").WithSecret(corev1ac.SecretVolumeSource().WithSecretName(c.PeerSecret())),
			corev1ac.Volume().WithName("client-trust").WithSecret(corev1ac.SecretVolumeSource().WithSecretName(ClientTrustSecret(c.RootShard))),
			corev1ac.Volume().WithName("peer-trust").WithSecret(corev1ac.SecretVolumeSource().WithSecretName(PeerTrustSecret(c.RootShard)))).
		// etcd does not talk to the host cluster's API.
		WithAutomountServiceAccountToken(false).
		WithSecurityContext(podSecurity()).
		// Members spread over nodes where they can; required would leave members pending on a
		// cluster of fewer nodes. A template's affinity replaces this one.
		WithAffinity(corev1ac.Affinity().WithPodAntiAffinity(corev1ac.PodAntiAffinity().
			WithPreferredDuringSchedulingIgnoredDuringExecution(corev1ac.WeightedPodAffinityTerm().WithWeight(100).
				WithPodAffinityTerm(corev1ac.PodAffinityTerm().WithTopologyKey(corev1.LabelHostname).
					WithLabelSelector(metav1ac.LabelSelector().WithMatchLabels(c.SelectorLabels()))))))
	if spec.Image != nil {
		for _, ref := range spec.Image.ImagePullSecrets {
			podSpec.WithImagePullSecrets(corev1ac.LocalObjectReference().WithName(ref.Name))
		}
	}
	if c.Restoring != nil {
		restore, volumes := c.restoreInitContainer()
		podSpec.WithInitContainers(restore).WithVolumes(volumes...)
	}

	pod := corev1ac.PodTemplateSpec().
		WithLabels(c.SelectorLabels()).
		WithAnnotations(map[string]string{workload.SecretsHashAnnotation: secretsHash})
	ss := appsv1ac.StatefulSet(c.Name(), c.Namespace).WithLabels(c.Labels())
	workload.ApplyStatefulSetTemplate(ss, pod, podSpec, spec.Template)

	return ss.WithSpec(appsv1ac.StatefulSetSpec().
		WithReplicas(c.Replicas()).
		WithServiceName(c.PeerServiceName()).
		// The members of a new cluster wait for one another: started one by one, the first
		// would never become ready.
		WithPodManagementPolicy(appsv1.ParallelPodManagement).
		WithUpdateStrategy(appsv1ac.StatefulSetUpdateStrategy().WithType(appsv1.RollingUpdateStatefulSetStrategyType)).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(c.SelectorLabels())).
		WithTemplate(pod.WithSpec(podSpec)).
		WithVolumeClaimTemplates(c.volumeClaimTemplate()).
		// The claims stay with the StatefulSet: the StatefulSet controller would delete the
		// claims of its names whoever's they are; the owner's deletion deletes its own, by
		// name and UID, when AnnotationDeleteEtcdVolumes asks for it.
		WithPersistentVolumeClaimRetentionPolicy(appsv1ac.StatefulSetPersistentVolumeClaimRetentionPolicy().
			WithWhenDeleted(appsv1.RetainPersistentVolumeClaimRetentionPolicyType).
			WithWhenScaled(appsv1.RetainPersistentVolumeClaimRetentionPolicyType)))
}

// podSecurity is the members' and the backup agent's pod security: Pod Security restricted,
// as the etcd pods' identity (which alone reads the snapshots of the volume store).
func podSecurity() *corev1ac.PodSecurityContextApplyConfiguration {
	return corev1ac.PodSecurityContext().
		WithRunAsNonRoot(true).WithRunAsUser(nonRootID).WithRunAsGroup(nonRootID).WithFSGroup(nonRootID).
		WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))
}

// volumeClaimTemplate is each member's data volume. The StatefulSet controller puts its
// labels on every claim: the owner label, and the owner's UID, by which the owner's deletion
// tells its claims from another's of the same name.
func (c *Cluster) volumeClaimTemplate() *corev1ac.PersistentVolumeClaimApplyConfiguration {
	size := resource.MustParse(operatorv1alpha1.DefaultEtcdStorageSize)
	var class *string
	if st := c.Spec.Storage; st != nil {
		if st.VolumeSize != nil {
			size = *st.VolumeSize
		}
		class = st.StorageClassName
	}
	spec := corev1ac.PersistentVolumeClaimSpec().
		WithAccessModes(corev1.ReadWriteOnce).
		WithResources(corev1ac.VolumeResourceRequirements().WithRequests(corev1.ResourceList{corev1.ResourceStorage: size}))
	if class != nil {
		spec.WithStorageClassName(*class)
	}
	// Not corev1ac.PersistentVolumeClaim, which sets a kind, an apiVersion and a namespace that
	// a claim template has no use for.
	claim := &corev1ac.PersistentVolumeClaimApplyConfiguration{}
	claim.WithName(dataVolume).WithLabels(c.Labels()).WithSpec(spec)
	if c.OwnerUID != "" {
		claim.WithLabels(map[string]string{pki.LabelOwnerUID: string(c.OwnerUID)})
	}
	return claim
}

// probes run etcdctl in the member against its own client port, with its serving
// certificate (a client one of the etcd client CA too): the kubelet cannot reach the
// loopback metrics listener, and has no client certificate for the client port.
// Readiness asks `endpoint health` (a linearizable read, and no alarm), which fails without
// a quorum, as /readyz; liveness asks for a serializable read, which the member answers
// from its own data without a leader, as /livez, so that it bears with a lost quorum.
func probes(c *corev1ac.ContainerApplyConfiguration) {
	etcdctl := func(args ...string) *corev1ac.ProbeApplyConfiguration {
		command := append([]string{"etcdctl",
			fmt.Sprintf("--endpoints=https://127.0.0.1:%d", ClientPort),
			"--cacert=" + clientTrustDir + "/tls.crt",
			"--cert=" + serverTLSDir + "/tls.crt",
			"--key=" + serverTLSDir + "/tls.key",
			fmt.Sprintf("--command-timeout=%ds", workload.ProbeTimeoutSeconds/2),
		}, args...)
		return corev1ac.Probe().WithExec(corev1ac.ExecAction().WithCommand(command...)).
			WithTimeoutSeconds(workload.ProbeTimeoutSeconds)
	}
	p := workload.Etcd
	c.WithStartupProbe(etcdctl("endpoint", "health").WithPeriodSeconds(5).WithFailureThreshold(60)).
		WithReadinessProbe(etcdctl("endpoint", "health").WithPeriodSeconds(10).WithFailureThreshold(p.ReadinessFailures)).
		WithLivenessProbe(etcdctl("get", "health", "--consistency=s").WithPeriodSeconds(10).WithFailureThreshold(p.LivenessFailures))
}

// Service is the client Service kcp may reach the cluster through.
func (c *Cluster) Service() *corev1ac.ServiceApplyConfiguration {
	return corev1ac.Service(c.Name(), c.Namespace).WithLabels(c.Labels()).
		WithSpec(corev1ac.ServiceSpec().WithType(corev1.ServiceTypeClusterIP).WithSelector(c.SelectorLabels()).
			WithPorts(servicePort(clientPortName, ClientPort)))
}

// PeerService is the headless Service that gives each member its DNS name. It publishes
// members before they are ready: a new cluster's members must find one another to become
// ready at all.
func (c *Cluster) PeerService() *corev1ac.ServiceApplyConfiguration {
	return corev1ac.Service(c.PeerServiceName(), c.Namespace).WithLabels(c.Labels()).
		WithSpec(corev1ac.ServiceSpec().WithClusterIP(corev1.ClusterIPNone).WithSelector(c.SelectorLabels()).
			WithPublishNotReadyAddresses(true).
			WithPorts(servicePort(peerPortName, PeerPort), servicePort(clientPortName, ClientPort)))
}

func servicePort(name string, port int32) *corev1ac.ServicePortApplyConfiguration {
	return corev1ac.ServicePort().WithName(name).WithProtocol(corev1.ProtocolTCP).WithPort(port).WithTargetPort(intstr.FromString(name))
}

// DisruptionBudget lets a drain take one member at a time, which keeps the quorum of three
// or five; a single member has none (nil).
func (c *Cluster) DisruptionBudget() *policyv1ac.PodDisruptionBudgetApplyConfiguration {
	return workload.StatefulSetDisruptionBudget(c.StatefulSet(""))
}
