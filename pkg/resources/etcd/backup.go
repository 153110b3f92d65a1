package etcd

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// The backup agent (docs/etcd.md, "Backups and restore").
const (
	// AgentRole is the agent's certificate role and its component label.
	AgentRole = "etcd-backup"
	// AgentPort is the agent's TLS port.
	AgentPort = 2390
	// AgentCommand is the server image's binary, which runs the agent and the restore.
	AgentCommand = "kcp-setups-apiserver"
	// RestoreClientRole is the role (and the name's suffix) of the client certificate the
	// members read another setup's snapshot with.
	RestoreClientRole = "etcd-restore-client"

	agentTLSDir      = "/etc/etcd-backup/tls"
	agentS3Dir       = "/etc/etcd-backup/s3"
	agentS3CADir     = "/etc/etcd-backup/s3-ca"
	restoreClientDir = "/etc/etcd/tls/restore-client"
	sourceTrustDir   = "/etc/etcd/tls/source-trust"
	snapshotsVolume  = "snapshots"
	snapshotsDir     = "/var/lib/etcd-snapshots"
	agentPortName    = "backup"
	agentContainer   = "agent"
	restoreContainer = "restore"
	// restoreClientVolume is the restore client certificate's volume.
	restoreClientVolume = "restore-client"
	sourceTrustVolume   = "source-trust"
)

// Backup is the managed etcd's backup, nil without one.
func (c *Cluster) Backup() *operatorv1alpha1.EtcdBackup { return c.Spec.Backup }

// AgentName is the agent's Deployment, Service and certificate (Secret).
func (c *Cluster) AgentName() string { return c.Base + "-" + AgentRole }

// SnapshotClaimName is the volume store's claim.
func (c *Cluster) SnapshotClaimName() string { return c.Base + "-etcd-snapshots" }

// S3CABundleName is the ConfigMap of the S3 store's CA bundle.
func (c *Cluster) S3CABundleName() string { return c.Base + "-etcd-backup-s3-ca" }

// AgentSelectorLabels select the agent's pod.
func (c *Cluster) AgentSelectorLabels() map[string]string {
	return map[string]string{pki.LabelInstance: c.OwnerName, pki.LabelComponent: AgentRole, pki.OwnerLabel(c.Kind): c.OwnerName}
}

// AgentLabels are the labels of the agent's objects.
func (c *Cluster) AgentLabels() map[string]string { return pki.Labels(c.Kind, c.OwnerName, AgentRole) }

// AgentURL is the agent's in-cluster URL.
func (c *Cluster) AgentURL() string {
	return fmt.Sprintf("https://%s.%s.svc.%s:%d", c.AgentName(), c.Namespace, c.ClusterDomain, AgentPort)
}

// AgentLeaf is the agent's certificate, of the RootShard's etcd client CA: it serves the
// agent's API and dials the members.
func (c *Cluster) AgentLeaf() pki.Leaf {
	return pki.Leaf{Name: c.AgentName(), Role: AgentRole, Issuer: pki.CAName(c.RootShard, pki.EtcdClientCA), CommonName: c.AgentName(),
		DNSNames: append(serviceForms(c.AgentName(), c.Namespace, c.ClusterDomain), "localhost"), IPAddresses: []string{"127.0.0.1"},
		Usage: pki.PeerAuth}
}

// AgentMounts are what the agent mounts read-only: its certificate, the client trust, and
// an S3 store's credentials (the user's Secret, which its author must be able to read) and
// CA bundle.
func (c *Cluster) AgentMounts() []workload.Mount {
	mounts := []workload.Mount{
		{Volume: "tls", Secret: c.AgentName(), Dir: agentTLSDir},
		{Volume: "client-trust", Secret: ClientTrustSecret(c.RootShard), Dir: clientTrustDir},
	}
	return append(mounts, c.s3Mounts(c.Spec.Backup.Store.S3, c.S3CABundleName(), "etcd.managed.backup.store.s3.credentialsSecretRef")...)
}

// s3Mounts are an S3 store's credentials and CA bundle, nil for another store.
func (c *Cluster) s3Mounts(s3 *operatorv1alpha1.S3SnapshotStore, caConfigMap, field string) []workload.Mount {
	if s3 == nil {
		return nil
	}
	mounts := []workload.Mount{{Volume: "s3-credentials", Secret: s3.CredentialsSecretRef.Name, Dir: agentS3Dir, User: true, Field: field,
		Keys: []string{"accessKeyID", "secretAccessKey"}}}
	if len(s3.CABundle) > 0 {
		mounts = append(mounts, workload.Mount{Volume: "s3-ca", ConfigMap: caConfigMap, Dir: agentS3CADir})
	}
	return mounts
}

// retention is the number of snapshots the store keeps.
func (c *Cluster) retention() int32 {
	if r := c.Spec.Backup.Retention; r != nil {
		return *r
	}
	return operatorv1alpha1.DefaultEtcdBackupRetention
}

// s3Prefix is the S3 store's prefix: the spec's, or <namespace>/<base>/.
func (c *Cluster) s3Prefix(s3 *operatorv1alpha1.S3SnapshotStore) string {
	if s3.Prefix != "" {
		return s3.Prefix
	}
	return c.Namespace + "/" + c.Base + "/"
}

// storeArgs are the flags that name a store.
func (c *Cluster) storeArgs(s3 *operatorv1alpha1.S3SnapshotStore) []string {
	if s3 == nil {
		return []string{"--snapshot-dir=" + snapshotsDir}
	}
	region := s3.Region
	if region == "" {
		region = "us-east-1"
	}
	args := []string{"--s3-endpoint=" + s3.Endpoint, "--s3-bucket=" + s3.Bucket, "--s3-prefix=" + c.s3Prefix(s3),
		"--s3-region=" + region, "--s3-credentials-dir=" + agentS3Dir}
	if len(s3.CABundle) > 0 {
		args = append(args, "--s3-ca-file="+agentS3CADir+"/ca.crt")
	}
	return args
}

// S3CABundle is the ConfigMap of the backup store's CA bundle, nil without one.
func (c *Cluster) S3CABundle() *corev1ac.ConfigMapApplyConfiguration {
	if c.Spec.Backup == nil || c.Spec.Backup.Store.S3 == nil || len(c.Spec.Backup.Store.S3.CABundle) == 0 {
		return nil
	}
	return corev1ac.ConfigMap(c.S3CABundleName(), c.Namespace).WithLabels(c.AgentLabels()).
		WithData(map[string]string{"ca.crt": string(c.Spec.Backup.Store.S3.CABundle)})
}

// AgentDeployment is the backup agent: one replica, replaced rather than rolled (the volume
// store's claim is ReadWriteOnce), the members' pod security, no ServiceAccount token.
// image is the server's own. secretsHash is workload.SecretsHash of AgentMountedSecrets.
func (c *Cluster) AgentDeployment(image, secretsHash string) *appsv1ac.DeploymentApplyConfiguration {
	b := c.Spec.Backup
	args := append([]string{"etcd-agent", "serve",
		"--cert-file=" + agentTLSDir + "/tls.crt", "--key-file=" + agentTLSDir + "/tls.key",
		"--trusted-ca-file=" + clientTrustDir + "/tls.crt",
		fmt.Sprintf("--listen-address=:%d", AgentPort),
		"--base=" + c.Base,
		"--retention=" + strconv.Itoa(int(c.retention())),
		"--endpoints=" + strings.Join(c.ClientURLs(), ","),
	}, c.storeArgs(b.Store.S3)...)
	container := corev1ac.Container().WithName(agentContainer).WithImage(image).
		WithCommand(AgentCommand).WithArgs(args...).
		WithPorts(corev1ac.ContainerPort().WithName(agentPortName).WithContainerPort(AgentPort).WithProtocol(corev1.ProtocolTCP)).
		WithReadinessProbe(corev1ac.Probe().WithTCPSocket(corev1ac.TCPSocketAction().WithPort(intstr.FromInt32(AgentPort))).
			WithPeriodSeconds(10)).
		WithSecurityContext(workload.SecurityContext()).
		WithResources(corev1ac.ResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")}).
			WithLimits(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}))
	podSpec := corev1ac.PodSpec().
		WithAutomountServiceAccountToken(false).
		WithSecurityContext(podSecurity())
	workload.AddMounts(podSpec, container, c.AgentMounts())
	if b.Store.S3 == nil {
		podSpec.WithVolumes(corev1ac.Volume().WithName(snapshotsVolume).
			WithPersistentVolumeClaim(corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(c.SnapshotClaimName())))
		container.WithVolumeMounts(corev1ac.VolumeMount().WithName(snapshotsVolume).WithMountPath(snapshotsDir))
	}
	podSpec.WithContainers(container)
	pod := corev1ac.PodTemplateSpec().WithLabels(c.AgentSelectorLabels()).
		WithAnnotations(map[string]string{workload.SecretsHashAnnotation: secretsHash}).
		WithSpec(podSpec)
	return appsv1ac.Deployment(c.AgentName(), c.Namespace).WithLabels(c.AgentLabels()).
		WithSpec(appsv1ac.DeploymentSpec().WithReplicas(1).
			WithStrategy(appsv1ac.DeploymentStrategy().WithType(appsv1.RecreateDeploymentStrategyType)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(c.AgentSelectorLabels())).
			WithTemplate(pod))
}

// restoreContainer is the members' init container while a restore applies: it restores the
// snapshot into the member's data directory when that is empty, and fails (etcd never
// starts) when the snapshot fails etcd's hash check.
func (c *Cluster) restoreInitContainer() (*corev1ac.ContainerApplyConfiguration, []*corev1ac.VolumeApplyConfiguration) {
	r := c.Restoring
	self := c.memberHost("$(POD_NAME)")
	members := make([]string, 0, c.Replicas())
	for i := range c.Replicas() {
		members = append(members, fmt.Sprintf("%s=https://%s:%d", c.MemberName(i), c.memberHost(c.MemberName(i)), PeerPort))
	}
	args := []string{"etcd-agent", "restore", "--snapshot=" + r.Snapshot,
		"--data-dir=" + dataDir, "--name=$(POD_NAME)",
		fmt.Sprintf("--initial-advertise-peer-urls=https://%s:%d", self, PeerPort),
		"--initial-cluster=" + strings.Join(members, ","),
		"--initial-cluster-token=" + c.Namespace + "." + c.Name()}
	mounts := []*corev1ac.VolumeMountApplyConfiguration{corev1ac.VolumeMount().WithName(dataVolume).WithMountPath(dataMountPath)}
	var volumes []*corev1ac.VolumeApplyConfiguration
	if r.ClientSecret != "" {
		// Another setup's agent: the restore client certificate, of its RootShard's etcd
		// client CA, and that CA alone to trust the agent by (not the root of the chain,
		// which the namespace's RootShards may share).
		args = append(args, "--source="+r.SourceURL,
			"--cert-file="+restoreClientDir+"/tls.crt", "--key-file="+restoreClientDir+"/tls.key",
			"--trusted-ca-file="+sourceTrustDir+"/tls.crt")
		mounts = append(mounts,
			corev1ac.VolumeMount().WithName(restoreClientVolume).WithMountPath(restoreClientDir).WithReadOnly(true),
			corev1ac.VolumeMount().WithName(sourceTrustVolume).WithMountPath(sourceTrustDir).WithReadOnly(true))
		volumes = append(volumes,
			corev1ac.Volume().WithName(restoreClientVolume).WithSecret(corev1ac.SecretVolumeSource().WithSecretName(r.ClientSecret)),
			corev1ac.Volume().WithName(sourceTrustVolume).WithSecret(corev1ac.SecretVolumeSource().WithSecretName(r.SourceTrust)))
	} else {
		args = append(args, "--source="+r.SourceURL,
			"--cert-file="+serverTLSDir+"/tls.crt", "--key-file="+serverTLSDir+"/tls.key",
			"--trusted-ca-file="+clientTrustDir+"/tls.crt")
		mounts = append(mounts,
			corev1ac.VolumeMount().WithName("server-tls").WithMountPath(serverTLSDir).WithReadOnly(true),
			corev1ac.VolumeMount().WithName("client-trust").WithMountPath(clientTrustDir).WithReadOnly(true))
	}
	return corev1ac.Container().WithName(restoreContainer).WithImage(c.AgentImage).
		WithCommand(AgentCommand).WithArgs(args...).
		WithEnv(corev1ac.EnvVar().WithName("POD_NAME").WithValueFrom(corev1ac.EnvVarSource().
			WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath("metadata.name")))).
		WithVolumeMounts(mounts...).
		WithSecurityContext(workload.SecurityContext()), volumes
}

// RestoringSnapshot is the snapshot the members of sts restore, from its restore init
// container, and whether it has one.
func RestoringSnapshot(sts *appsv1.StatefulSet) (string, bool) {
	r := RestoringOf(sts)
	if r == nil {
		return "", false
	}
	return r.Snapshot, true
}

// RestoringOf is the restore sts's template was created with, from its restore init
// container (its snapshot, its agent and the Secret of its client certificate toward
// another setup's agent), nil without one: while the members restore, the template keeps it.
func RestoringOf(sts *appsv1.StatefulSet) *Restoring {
	if sts == nil {
		return nil
	}
	for _, c := range sts.Spec.Template.Spec.InitContainers {
		if c.Name != restoreContainer {
			continue
		}
		r := &Restoring{}
		for _, a := range c.Args {
			if name, ok := strings.CutPrefix(a, "--snapshot="); ok {
				r.Snapshot = name
			}
			if url, ok := strings.CutPrefix(a, "--source="); ok {
				r.SourceURL = url
			}
		}
		for _, v := range sts.Spec.Template.Spec.Volumes {
			if v.Secret == nil || !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == v.Name }) {
				continue
			}
			switch v.Name {
			case restoreClientVolume:
				r.ClientSecret = v.Secret.SecretName
			case sourceTrustVolume:
				r.SourceTrust = v.Secret.SecretName
			}
		}
		return r
	}
	return nil
}

// OwnRestore is the restore of this etcd's own store through its agent, which serves it to
// the members with their serving certificates (of the RootShard's etcd client CA).
func (c *Cluster) OwnRestore(snapshot string) *Restoring {
	return &Restoring{Snapshot: snapshot, SourceURL: c.AgentURL()}
}

// RestoreFrom is the restore of source's store (another RootShard's or Shard's managed etcd of
// the namespace) through source's agent, which trusts clients of source's RootShard's etcd
// client CA alone: the members read it with the restore client certificate, issued by that
// CA for this etcd (RestoreClientCertificate).
func (c *Cluster) RestoreFrom(source *Cluster, snapshot string) *Restoring {
	return &Restoring{Snapshot: snapshot, SourceURL: source.AgentURL(), ClientSecret: c.RestoreClientName(),
		SourceTrust: ClientTrustSecret(source.RootShard), Certificate: c.RestoreClientCertificate(source)}
}

// RestoreClientName is the Certificate and Secret of the client certificate the members read
// another setup's snapshot with.
func (c *Cluster) RestoreClientName() string { return c.Base + "-" + RestoreClientRole }

// RestoreClientCertificate is the members' client certificate toward source's agent: client
// auth alone, issued by the etcd client CA Issuer of source's RootShard (in the namespace),
// labeled as this etcd's owner's, which the server marks with the owner's UID.
func (c *Cluster) RestoreClientCertificate(source *Cluster) *cmapply.CertificateApplyConfiguration {
	leaf := pki.Leaf{Name: c.RestoreClientName(), Role: RestoreClientRole, Issuer: pki.CAName(source.RootShard, pki.EtcdClientCA),
		CommonName: c.Base + "-etcd-restore", Usage: pki.ClientAuth}
	return certificates.Certificate(certificates.Leaf(c.Namespace, leaf, pki.Labels(c.Kind, c.OwnerName, RestoreClientRole), nil))
}

// AgentService is the agent's Service.
func (c *Cluster) AgentService() *corev1ac.ServiceApplyConfiguration {
	return corev1ac.Service(c.AgentName(), c.Namespace).WithLabels(c.AgentLabels()).
		WithSpec(corev1ac.ServiceSpec().WithType(corev1.ServiceTypeClusterIP).WithSelector(c.AgentSelectorLabels()).
			WithPorts(servicePort(agentPortName, AgentPort)))
}

// SnapshotClaim is the volume store's claim, nil with another store. It carries its owner's
// UID, as the members' claims do, and no owner reference: the snapshots outlive their owner.
func (c *Cluster) SnapshotClaim() *corev1ac.PersistentVolumeClaimApplyConfiguration {
	b := c.Spec.Backup
	if b == nil || b.Store.S3 != nil {
		return nil
	}
	size := resource.MustParse(operatorv1alpha1.DefaultEtcdStorageSize)
	if st := c.Spec.Storage; st != nil && st.VolumeSize != nil {
		size = *st.VolumeSize
	}
	spec := corev1ac.PersistentVolumeClaimSpec().WithAccessModes(corev1.ReadWriteOnce)
	if v := b.Store.Volume; v != nil {
		if v.VolumeSize != nil {
			size = *v.VolumeSize
		}
		if v.StorageClassName != nil {
			spec.WithStorageClassName(*v.StorageClassName)
		}
	}
	spec.WithResources(corev1ac.VolumeResourceRequirements().WithRequests(corev1.ResourceList{corev1.ResourceStorage: size}))
	claim := corev1ac.PersistentVolumeClaim(c.SnapshotClaimName(), c.Namespace).WithLabels(c.AgentLabels()).WithSpec(spec)
	if c.OwnerUID != "" {
		claim.WithLabels(map[string]string{pki.LabelOwnerUID: string(c.OwnerUID)})
	}
	return claim
}
