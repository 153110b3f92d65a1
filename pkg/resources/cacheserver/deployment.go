package cacheserver

import (
	"fmt"

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

// features are the cache server's settings in the order of its command line and of its
// volumes (docs/WORKLOADS.md), with the flags the image's kcp release defines: its serving
// certificate and client CA, its etcd, logging, then the user's extra arguments. Validation
// refuses spec.etcd on a release without --etcd-*.
func (c CacheServer) features() []workload.Feature {
	version := c.Version()
	own := workload.Feature{
		Args: []string{
			"--tls-cert-file=" + servingDir + "/tls.crt",
			"--tls-private-key-file=" + servingDir + "/tls.key",
		},
		Mounts: []workload.Mount{
			{Volume: "serving", Secret: c.ServerName(), Dir: servingDir},
			{Volume: "client-ca", Secret: c.ClientCAName(), Dir: clientCADir},
		},
	}
	if version.CacheServerClientCA() {
		// Before kcp v0.30.2 the cache server has no authentication flags at all.
		own.Args = append(own.Args, "--client-ca-file="+clientCADir+"/"+ClientCAKey)
	}
	own.Args = append(own.Args, "--root-directory=")
	etcd := workload.Feature{Args: []string{"--embedded-etcd-directory=" + EmbeddedEtcdDir}}
	if c.Spec.Etcd != nil {
		etcd = kcp.ExternalEtcd(*c.Spec.Etcd)
	}
	var logging []string
	if version.CacheServerEtcd() {
		// JSON logs like the shards'; the cache server has the flag from kcp v0.31.0 on.
		logging = append(logging, "--logging-format=json")
	}
	level := int32(0)
	if c.Spec.Logging != nil {
		level = c.Spec.Logging.Level
	}
	logging = append(logging, fmt.Sprintf("-v=%d", level))
	return []workload.Feature{own, etcd, {Args: append(logging, c.Spec.ExtraArgs...)}}
}

// Args is the cache-server command line.
func (c CacheServer) Args() []string { return workload.Features(c.features()...).Args }

// Version is the kcp release of the cache server's image.
func (c CacheServer) Version() kcpversion.Version { return workload.KcpVersion(c.Spec.Image) }

// Mounts are the Secrets the cache server's pods mount: the Deployment is created once those
// the controllers and cert-manager write exist, and a change to any of them rolls it.
func (c CacheServer) Mounts() []workload.Mount { return workload.Features(c.features()...).Mounts }

// UsersSecrets are the Secrets the pods mount that the user provides: etcd's client TLS. A
// change to one rolls the Deployment too.
func (c CacheServer) UsersSecrets() []string {
	return workload.Secrets(c.Mounts(), workload.UsersSecret)
}

// Deployment builds the cache server's Deployment. current is the Deployment as it is now
// (nil when absent); mountsHash is workload.SecretsHash of the mounted Secrets. With the
// embedded etcd it has exactly one replica, whose data lives in an emptyDir: the shards fill
// a new cache again.
func (c CacheServer) Deployment(current *appsv1.Deployment, mountsHash string) *appsv1ac.DeploymentApplyConfiguration {
	spec := c.Spec.ComponentSpec
	all := workload.Features(c.features()...)
	container := corev1ac.Container().WithName("cache-server").WithCommand("/cache-server").WithArgs(all.Args...)
	podSpec := corev1ac.PodSpec()
	workload.AddMounts(podSpec, container, all.Mounts)
	if c.Spec.Etcd == nil {
		spec.Replicas = ptr.To[int32](1)
		podSpec.WithVolumes(corev1ac.Volume().WithName("etcd-data").WithEmptyDir(corev1ac.EmptyDirVolumeSource()))
		container.WithVolumeMounts(corev1ac.VolumeMount().WithName("etcd-data").WithMountPath(EmbeddedEtcdDir))
	}
	return workload.Deployment(c.DeploymentName(), c.Namespace, pki.WorkloadLabels(Kind, c.Name, pki.CacheServerWorkload), c.SelectorLabels(),
		&spec, container, podSpec, current, mountsHash, workload.CacheServer)
}
