package cacheserver

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kcp-setups/apiserver/pkg/kcpversion"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// Where things are mounted in the cache-server container (docs/WORKLOADS.md). Nothing is under
// /etc/kcp, so that the paths never collide with a shard's.
const (
	servingDir  = mountpaths.CacheServerTLSDir + "/server"
	clientCADir = mountpaths.CacheServerTLSDir + "/ca"
	// EmbeddedEtcdDir is where the embedded etcd keeps its data.
	EmbeddedEtcdDir = mountpaths.EmbeddedEtcdDir
)

// Args is the cache-server command line (docs/WORKLOADS.md), in one place, with the flags the
// image's kcp release defines. Validation refuses spec.etcd on a release without --etcd-*.
func (c CacheServer) Args() []string {
	version := c.Version()
	args := []string{
		"--tls-cert-file=" + servingDir + "/tls.crt",
		"--tls-private-key-file=" + servingDir + "/tls.key",
	}
	if version.CacheServerClientCA() {
		// Before kcp v0.30.2 the cache server has no authentication flags at all.
		args = append(args, "--client-ca-file="+clientCADir+"/"+ClientCAKey)
	}
	args = append(args, "--root-directory=")
	if c.Spec.Etcd == nil {
		args = append(args, "--embedded-etcd-directory="+EmbeddedEtcdDir)
	} else {
		args = append(args, kcp.EtcdArgs(*c.Spec.Etcd)...)
	}
	level := int32(0)
	if c.Spec.Logging != nil {
		level = c.Spec.Logging.Level
	}
	if version.CacheServerEtcd() {
		// JSON logs like the shards'; the cache server has the flag from kcp v0.31.0 on.
		args = append(args, "--logging-format=json")
	}
	args = append(args, fmt.Sprintf("-v=%d", level))
	return append(args, c.Spec.ExtraArgs...)
}

// Version is the kcp release of the cache server's image.
func (c CacheServer) Version() kcpversion.Version { return workload.KcpVersion(c.Spec.Image) }

// MountedSecrets are the names of the Secrets the pods mount that the controllers and
// cert-manager write, sorted: the Deployment is created once they exist, and a change to any
// of them rolls it.
func (c CacheServer) MountedSecrets() []string {
	names := []string{c.ServerName(), c.ClientCAName()}
	sort.Strings(names)
	return names
}

// UsersSecrets are the Secrets the pods mount that the user provides: etcd's client TLS. A
// change to one rolls the Deployment too.
func (c CacheServer) UsersSecrets() []string {
	if e := c.Spec.Etcd; e != nil && e.TLSConfig != nil {
		return []string{e.TLSConfig.SecretRef.Name}
	}
	return nil
}

// Deployment builds the cache server's Deployment. current is the Deployment as it is now
// (nil when absent); mountsHash is workload.SecretsHash of the mounted Secrets. With the
// embedded etcd it has exactly one replica, whose data lives in an emptyDir: the shards fill
// a new cache again.
func (c CacheServer) Deployment(current *appsv1.Deployment, mountsHash string) *appsv1ac.DeploymentApplyConfiguration {
	spec := c.Spec.ComponentSpec
	container := corev1ac.Container().WithName("cache-server").WithCommand("/cache-server").WithArgs(c.Args()...)
	podSpec := corev1ac.PodSpec()
	podSpec.WithVolumes(
		corev1ac.Volume().WithName("serving").WithSecret(corev1ac.SecretVolumeSource().WithSecretName(c.ServerName())),
		corev1ac.Volume().WithName("client-ca").WithSecret(corev1ac.SecretVolumeSource().WithSecretName(c.ClientCAName())))
	container.WithVolumeMounts(
		corev1ac.VolumeMount().WithName("serving").WithMountPath(servingDir).WithReadOnly(true),
		corev1ac.VolumeMount().WithName("client-ca").WithMountPath(clientCADir).WithReadOnly(true))
	if etcd := c.Spec.Etcd; etcd == nil {
		spec.Replicas = ptr.To[int32](1)
		podSpec.WithVolumes(corev1ac.Volume().WithName("etcd-data").WithEmptyDir(corev1ac.EmptyDirVolumeSource()))
		container.WithVolumeMounts(corev1ac.VolumeMount().WithName("etcd-data").WithMountPath(EmbeddedEtcdDir))
	} else if etcd.TLSConfig != nil {
		podSpec.WithVolumes(corev1ac.Volume().WithName("etcd-tls").WithSecret(corev1ac.SecretVolumeSource().WithSecretName(etcd.TLSConfig.SecretRef.Name)))
		container.WithVolumeMounts(corev1ac.VolumeMount().WithName("etcd-tls").WithMountPath(kcp.EtcdTLSDir).WithReadOnly(true))
	}
	return workload.Deployment(c.DeploymentName(), c.Namespace, pki.WorkloadLabels(Kind, c.Name, pki.CacheServerWorkload), c.SelectorLabels(),
		&spec, container, podSpec, current, mountsHash, workload.CacheServer)
}
