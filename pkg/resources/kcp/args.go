package kcp

import (
	"slices"
	"strconv"
	"strings"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// features are the server's settings in the order of its command line and of its volumes
// (docs/WORKLOADS.md), in one place so that a new kcp release is one edit: its own identity and
// trust, the mount proxy's identity where the image's kcp has one, etcd, cache, the
// standalone virtual workspace server, the kind's own flags and mounts, then authentication,
// the other shards' service-account keys, audit and authorization, then the user's extra
// arguments.
func (s Server) features() []workload.Feature {
	spec := s.Spec
	return []workload.Feature{
		s.base(),
		s.mountProxy(),
		s.etcd(),
		s.cache(),
		{Args: s.VirtualWorkspaceArgs()},
		{Args: s.KindArgs, Mounts: s.KindMounts},
		Authentication(spec.Auth),
		// The other shards' keys, its own being verified with --service-account-key-file.
		ServiceAccountKeys(s.RootShard, s.serviceAccountPeers()),
		Audit(spec.Audit),
		Authorization(spec.Authorization),
		{Args: spec.ExtraArgs},
	}
}

// Args is the kcp command line of the server.
func (s Server) Args() []string { return workload.Features(s.features()...).Args }

// mounts are the Secrets and ConfigMaps the server's pod mounts.
func (s Server) mounts() []workload.Mount { return workload.Features(s.features()...).Mounts }

// base is what every kcp server has: CAs, request-header authentication, serving, service
// accounts, shard URLs, admin kubeconfigs and fixed flags, with the CAs, certificates and
// kubeconfigs they read.
func (s Server) base() workload.Feature {
	level := int32(0)
	if s.Spec.Logging != nil {
		level = s.Spec.Logging.Level
	}
	trust := s.ownServiceAccountTrust()
	return workload.Feature{
		Args: slices.Concat([]string{
			"start",
			"--root-ca-file=" + caDir("root") + "/tls.crt",
			"--client-ca-file=" + caDir("client") + "/tls.crt",
			"--requestheader-client-ca-file=" + caDir("requestheader-client") + "/tls.crt",
			"--requestheader-allowed-names=kcp-front-proxy," + RootShardProxyCommonName,
			"--requestheader-username-headers=X-Remote-User",
			"--requestheader-group-headers=X-Remote-Group",
			"--requestheader-extra-headers-prefix=X-Remote-Extra-",
			"--tls-cert-file=" + leafDir("server") + "/tls.crt",
			"--tls-private-key-file=" + leafDir("server") + "/tls.key",
			"--service-account-key-file=" + leafDir("service-account") + "/tls.crt",
			"--service-account-private-key-file=" + leafDir("service-account") + "/tls.key",
			"--service-account-lookup=false",
		}, trust.Args, []string{
			"--shard-base-url=" + s.BaseURL(),
			"--shard-external-url=" + s.ExternalURL(),
			"--shard-client-cert-file=" + leafDir("client") + "/tls.crt",
			"--shard-client-key-file=" + leafDir("client") + "/tls.key",
			"--logical-cluster-admin-kubeconfig=" + KubeconfigDir(LogicalClusterAdmin) + "/" + KubeconfigKey,
			"--external-logical-cluster-admin-kubeconfig=" + KubeconfigDir(ExternalLogicalClusterAdmin) + "/" + KubeconfigKey,
			"--batteries-included=workspace-types",
			"--root-directory=",
			"--enable-leader-election=true",
			"--logging-format=json",
			"-v=" + strconv.Itoa(int(level)),
		}),
		Mounts: slices.Concat(s.caMounts(), s.ownMounts(), trust.Mounts),
	}
}

// mountProxy is the identity the server forwards requests for mounted workspaces to the
// front proxy with, which the front proxy lets assert the user's X-Remote-* headers, where
// the image's kcp has a mount proxy.
func (s Server) mountProxy() workload.Feature {
	if !s.Version().MountProxy() {
		return workload.Feature{}
	}
	return workload.Feature{
		Args: []string{
			"--mount-proxy-client-cert-file=" + leafDir(MountsProxy) + "/tls.crt",
			"--mount-proxy-client-key-file=" + leafDir(MountsProxy) + "/tls.key",
		},
		Mounts: []workload.Mount{{Volume: MountsProxy, Secret: s.Name + "-" + MountsProxy, Dir: leafDir(MountsProxy)}},
	}
}

// etcd is the server's etcd: its managed etcd's members, with the client certificate the
// server issues for it, else the spec's external etcd.
func (s Server) etcd() workload.Feature {
	if s.Etcd == nil {
		return ExternalEtcd(s.Spec.Etcd)
	}
	return workload.Feature{
		Args:   etcdArgs(s.Etcd.ClientURLs(), s.Spec.Etcd.Prefix, true),
		Mounts: []workload.Mount{{Volume: "etcd-tls", Secret: s.Etcd.ClientSecret(), Dir: EtcdTLSDir}},
	}
}

// ExternalEtcd is spec.etcd of an external etcd, of a shard or a cache server: its flags,
// with client TLS from the user's Secret when configured.
func ExternalEtcd(etcd operatorv1alpha1.EtcdConfig) workload.Feature {
	f := workload.Feature{Args: etcdArgs(etcd.Endpoints, etcd.Prefix, etcd.TLSConfig != nil)}
	if tls := etcd.TLSConfig; tls != nil {
		f.Mounts = []workload.Mount{{Volume: "etcd-tls", Secret: tls.SecretRef.Name, Dir: EtcdTLSDir, User: true, Field: "tlsConfig.secretRef"}}
	}
	return f
}

// etcdArgs are kcp's etcd flags, with the client certificate mounted at EtcdTLSDir when tls.
func etcdArgs(servers []string, prefix string, tls bool) []string {
	args := []string{"--etcd-servers=" + strings.Join(servers, ",")}
	if prefix != "" {
		args = append(args, "--etcd-prefix="+prefix)
	}
	if tls {
		args = append(args,
			"--etcd-certfile="+EtcdTLSDir+"/tls.crt",
			"--etcd-keyfile="+EtcdTLSDir+"/tls.key",
			"--etcd-cafile="+EtcdTLSDir+"/ca.crt")
	}
	return args
}

// cache is the server's kubeconfig toward its CacheServer, when it uses one.
func (s Server) cache() workload.Feature {
	if !s.UsesCacheServer() {
		return workload.Feature{}
	}
	return workload.Feature{
		Args:   []string{"--cache-kubeconfig=" + cacheKubeDir + "/" + KubeconfigKey},
		Mounts: []workload.Mount{{Volume: "cache-kubeconfig", Secret: s.CacheKubeconfig(), Dir: cacheKubeDir}},
	}
}

// VirtualWorkspaceArgs hand the server's virtual workspaces to its standalone server, when it
// has one: kcp stops serving them, announces the server's URL, and calls it with its client
// certificate (--shard-client-cert-file, which every server passes), verifying it with the
// server CA, or the CA bundle that holds it where the server has one (caMounts).
func (s Server) VirtualWorkspaceArgs() []string {
	vw := s.VirtualWorkspace
	if vw == nil {
		return nil
	}
	ca := caDir("server")
	if s.ServerCABundle != "" {
		// The bundle holds the server CA and the CAs of caBundleSecretRef, which may have
		// issued the server's certificate through a certificate template's issuerRef.
		ca = caDir("bundle")
	}
	return []string{
		"--run-virtual-workspaces=false",
		"--shard-virtual-workspace-url=" + vw.URL,
		"--shard-virtual-workspace-ca-file=" + ca + "/tls.crt",
	}
}
