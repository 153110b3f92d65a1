package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
)

// compatDir holds the kcp-operator-shaped manifests (see its README.md).
const compatDir = "testdata/kcp-operator"

// TestKcpOperatorManifests applies a whole setup written the way kcp-operator's users write
// it, unchanged, with kubectl's strict field validation, and follows each field to where it
// must land in the realized objects: flags, mounts, subject alternative names, issuers and
// bundles. Deprecated fields come back as kubectl warnings. spec.authorization, which the
// server realizes in kcp, applies too; its bindings are tested against the kcp double.
func TestKcpOperatorManifests(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "compat")
	// The prerequisites are all a user needs before the setup, the extra CAs included.
	kubectl(t, "apply", "-n", ns, "-f", compatDir+"/prerequisites.yaml")
	extraCA, extraClientCA := string(decodeSecret(t, ns, "extra-ca", "tls.crt")), string(decodeSecret(t, ns, "extra-client-ca", "tls.crt"))
	require.Contains(t, extraCA, "BEGIN CERTIFICATE")
	require.Contains(t, extraClientCA, "BEGIN CERTIFICATE")

	out, err := stack.Kubectl(t.Context(), "apply", "--validate=strict", "-n", ns, "-f", compatDir+"/setup.yaml")
	require.NoError(t, err, "kcp-operator's manifests apply unchanged:\n%s", out)
	for _, warning := range []string{
		"Warning: spec.auth.oidc.clientSecret",
		"Warning: spec.cache.embedded",
		"Warning: spec.externalHostname is deprecated: use spec.external.hostname",
		"Warning: spec.authorization.webhook.allowPaths is deprecated: use spec.authorization.allowPaths",
		// kcp-operator's sample asks for a year: issued for the server's maximum instead.
		"Warning: spec.validity: 8766h0m0s is above the server's maximum (--max-kubeconfig-validity): the certificate is issued for 720h0m0s",
	} {
		assert.Contains(t, out, warning, "a deprecated or inert field says so")
	}
	assert.NotContains(t, out, "Warning: spec.proxy", "spec.proxy is realized")

	out, err = stack.Kubectl(t.Context(), "apply", "--validate=strict", "-n", ns, "-f", compatDir+"/virtualworkspaces.yaml")
	require.NoError(t, err, "kcp-operator's VirtualWorkspaces apply unchanged:\n%s", out)

	out, err = stack.Kubectl(t.Context(), "apply", "--validate=strict", "-n", ns, "-f", compatDir+"/virtualworkspaces-contrib.yaml")
	require.NoError(t, err, "kcp-operator's samples of the contrib virtual workspaces apply unchanged:\n%s", out)

	out, err = stack.Kubectl(t.Context(), "apply", "--validate=strict", "-n", ns, "-f", compatDir+"/virtualworkspace-path.yaml")
	require.NoError(t, err, "kcp-operator's FrontProxy of the custom VirtualWorkspace applies with its one change:\n%s", out)

	out, err = stack.Kubectl(t.Context(), "apply", "--validate=strict", "-n", ns, "-f", compatDir+"/kubeconfig-authorization.yaml")
	require.NoError(t, err, "kcp-operator's Kubeconfig authorization applies unchanged:\n%s", out)

	out, err = stack.Kubectl(t.Context(), "apply", "--validate=strict", "-n", ns, "-f", compatDir+"/authorization.yaml")
	require.NoError(t, err, "kcp-operator's spec.authorization.allowPaths and order apply unchanged:\n%s", out)
	assert.NotContains(t, withoutPreview(out), "Warning:", "allowPaths is kcp-operator's current field")

	objects := []string{"rootshard/root", "shard/shard-1", "shard/shard-2", "cacheserver/cache", "frontproxy/edge", "frontproxy/legacy",
		"shard/shard-authz", "kubeconfig/kcp-admin", "kubeconfig/shard-admin", "kubeconfig/root-admin", "kubeconfig/bound", "virtualworkspace/shard-2", "virtualworkspace/access", "virtualworkspace/mcp", "virtualworkspace/ephemeral", "kubeconfig/mcp-vw-server",
		"frontproxy/frontproxy-sample"}
	for _, o := range objects {
		waitFor(t, ns, o, "Available")
	}
	// Each takes the running (sub)test's t, so that a failure ends that test alone.
	get := func(t *testing.T, object, path string) string {
		return kubectl(t, "get", object, "-n", ns, "-o", "jsonpath="+path)
	}
	args := func(t *testing.T, deployment string) []string {
		return nonEmptyLines(get(t, "deployment/"+deployment, `{range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}`))
	}
	certificate := func(t *testing.T, name, path string) string { return get(t, "certificate/"+name, path) }

	t.Run("RootShard", func(t *testing.T) {
		a := args(t, "root-kcp")
		assert.Equal(t, "selfsigned", certificate(t, "root-ca", "{.spec.issuerRef.name}"), "certificates.issuerRef issues the root CA")
		dns := certificate(t, "root-server", "{.spec.dnsNames}")
		assert.Contains(t, dns, "root.shard.example.com", "certificateTemplates.server.spec.dnsNames")
		assert.Equal(t, "RSA", certificate(t, "root-server", "{.spec.privateKey.algorithm}"))
		assert.Equal(t, "platform", certificate(t, "root-server", "{.metadata.labels.team}"))
		assert.Equal(t, "LoadBalancer", get(t, "service/root-kcp", "{.spec.type}"))
		assert.Equal(t, "2", get(t, "deployment/root-kcp", "{.spec.replicas}"))
		assert.Equal(t, "500m", get(t, "deployment/root-kcp", "{.spec.template.spec.containers[0].resources.requests.cpu}"))
		assert.Equal(t, "ghcr.io/kcp-dev/kcp:v0.32.3", get(t, "deployment/root-kcp", "{.spec.template.spec.containers[0].image}"))
		assert.Equal(t, "platform", get(t, "deployment/root-kcp", "{.spec.template.metadata.annotations.example\\.com/owner}"))
		assert.Equal(t, "kcp.example.com", get(t, "deployment/root-kcp", "{.spec.template.spec.hostAliases[0].hostnames[0]}"))
		assert.Equal(t, "dedicated", get(t, "deployment/root-kcp", "{.spec.template.spec.tolerations[0].key}"))
		for _, want := range []string{
			"--oidc-issuer-url=https://dex.example.com", "--oidc-client-id=kcp", "--oidc-groups-claim=groups",
			"--oidc-username-claim=email", "--oidc-groups-prefix=oidc:", "--oidc-username-prefix=oidc:",
			"--oidc-ca-file=/etc/kcp/oidc-ca/ca.crt",
			"--authentication-token-webhook-config-file=/etc/kcp/authentication/webhook/kubeconfig",
			"--authentication-token-webhook-cache-ttl=2m0s", "--authentication-token-webhook-version=v1",
			"--token-auth-file=/etc/kcp/authentication/token/token.csv",
			"--audit-policy-file=/etc/kcp/audit/policy/policy.yaml", "--audit-webhook-mode=batch", "--audit-webhook-batch-max-size=100",
			"--authorization-always-allow-paths=/healthz", "--authorization-webhook-cache-authorized-ttl=5m0s", "--authorization-webhook-version=v1",
			"--etcd-servers=https://etcd.kcp.svc.cluster.local:2379", "--etcd-prefix=/kcp", "-v=4",
			"--mount-proxy-client-cert-file=/etc/kcp/tls/mounts-proxy/tls.crt",
		} {
			assert.Contains(t, a, want)
		}
		assert.Equal(t, []string{"--encryption-provider-config", "/etc/kcp/encryption/encryption-config.yaml"}, a[len(a)-2:],
			"extraArgs come last, a flag and its value as two entries")
		assert.NotContains(t, strings.Join(a, " "), "not-used-by-kube-oidc", "the deprecated OIDC client secret reaches no flag")
		assert.NotContains(t, a, "--external-hostname=kcp.example.com", "kcp v0.32 ignores it")
		assert.Equal(t, "/etc/kcp/encryption",
			get(t, "deployment/root-kcp", `{.spec.template.spec.containers[0].volumeMounts[?(@.name=="encryption")].mountPath}`))
		assert.Equal(t, "10", get(t, "deployment/root-kcp", "{.spec.template.spec.containers[0].livenessProbe.timeoutSeconds}"))
		assert.Equal(t, "1", get(t, "pdb/root-kcp", "{.spec.maxUnavailable}"), "two replicas: a PodDisruptionBudget")
		assert.Contains(t, string(decodeSecret(t, ns, "root-merged-client-ca", "tls.crt")), strings.TrimSpace(extraClientCA),
			"clientCABundleRef joins the client CA bundle")
	})

	t.Run("service-account keys of every shard", func(t *testing.T) {
		for _, d := range []string{"root-kcp", "shard-1-shard-kcp", "shard-2-shard-kcp", "edge-front-proxy"} {
			require.Eventually(t, func() bool {
				return len(withPrefix(args(t, d), "--service-account-key-file=")) >= 3
			}, 2*time.Minute, time.Second, "%s verifies the tokens of the root shard and both shards", d)
		}
		assert.Contains(t, args(t, "edge-front-proxy"), "--service-account-lookup=false")
	})

	t.Run("Shard", func(t *testing.T) {
		a := args(t, "shard-1-shard-kcp")
		assert.Contains(t, a, "-v=2")
		assert.Contains(t, a, "--mount-proxy-client-cert-file=/etc/kcp/tls/mounts-proxy/tls.crt")
		assert.Equal(t, "kcp-mounts-proxy", certificate(t, "shard-1-mounts-proxy", "{.spec.commonName}"))
		assert.Equal(t, "platform", certificate(t, "shard-1-mounts-proxy", "{.metadata.labels.team}"), "certificateTemplates.mounts-proxy")
		assert.Contains(t, certificate(t, "shard-1-server", "{.spec.dnsNames}"), "shard-1.shards.example.com")
		assert.Contains(t, string(decodeSecret(t, ns, "shard-1-merged-client-ca", "tls.crt")), strings.TrimSpace(extraClientCA),
			"the shard's clientCABundleRef gets it a client CA bundle of its own")
		assert.Equal(t, "shard-1-merged-client-ca",
			get(t, "deployment/shard-1-shard-kcp", `{.spec.template.spec.volumes[?(@.name=="ca-client")].secret.secretName}`))
		assert.Contains(t, string(decodeSecret(t, ns, "shard-1-merged-ca-bundle", "tls.crt")), strings.TrimSpace(extraCA))
		cfg, err := clientcmd.Load(decodeSecret(t, ns, "shard-1-external-logical-cluster-admin-kubeconfig", "kubeconfig"))
		require.NoError(t, err)
		for _, c := range cfg.Clusters {
			assert.Equal(t, "https://kcp.internal.example.com:8443", c.Server, "the RootShard's private address")
		}
		assert.Contains(t, args(t, "shard-2-shard-kcp"), "--cache-kubeconfig=/etc/cache-server/kubeconfig/kubeconfig", "cache.ref")
		assert.Equal(t, "1", get(t, "pdb/shard-1-shard-kcp", "{.spec.maxUnavailable}"))
	})

	t.Run("RootShard's internal front proxy", func(t *testing.T) {
		kubectl(t, "wait", "-n", ns, "--for=condition=Available", "deployment/root-proxy", "--timeout=2m")
		assert.Equal(t, "1", get(t, "deployment/root-proxy", "{.spec.replicas}"), "spec.proxy.replicas")
		a := args(t, "root-proxy")
		for _, want := range []string{"--mapping-file=/etc/kcp-front-proxy/config/path-mapping.yaml",
			"--requestheader-allowed-names=kcp-root-shard-proxy,kcp-mounts-proxy", "-v=3"} {
			assert.Contains(t, a, want)
		}
		assert.Equal(t, "platform", certificate(t, "root-proxy-server", "{.metadata.labels.team}"), "spec.proxy.certificateTemplates")
		assert.Equal(t, "kcp-root-shard-proxy", certificate(t, "root-proxy-requestheader", "{.spec.commonName}"))
		assert.Contains(t, get(t, "configmap/root-proxy-config", "{.data.path-mapping\\.yaml}"), "backend: https://root.shard.example.com:6443",
			"the root shard's base URL: its shardBaseURL")
		assert.Contains(t, string(decodeSecret(t, ns, "root-proxy-merged-client-ca", "tls.crt")), strings.TrimSpace(extraClientCA),
			"the RootShard's clientCABundleRef, as kcp-operator's")
		for _, d := range []string{"root-kcp", "shard-1-shard-kcp"} {
			assert.Contains(t, args(t, d), "--requestheader-allowed-names=kcp-front-proxy,kcp-root-shard-proxy", "%s lets the proxy through", d)
		}
	})

	t.Run("CacheServer", func(t *testing.T) {
		assert.Equal(t, "selfsigned", certificate(t, "cache-ca", "{.spec.issuerRef.name}"))
		assert.Equal(t, "platform", certificate(t, "cache-ca", "{.metadata.labels.team}"), "kcp-operator's root-ca template key")
		assert.Contains(t, certificate(t, "cache-server", "{.spec.dnsNames}"), "cache.example.com")
		assert.Contains(t, args(t, "cache-cache-server"), "-v=2")
		assert.Empty(t, strings.TrimSpace(kubectl(t, "get", "pdb", "-n", ns, "-l", "operator.kcp.io/cacheserver=cache", "-o", "name")),
			"one replica: no PodDisruptionBudget")
	})

	t.Run("FrontProxy", func(t *testing.T) {
		assert.Equal(t, "letsencrypt", certificate(t, "root-edge-server", "{.spec.issuerRef.name}"), "a per-certificate issuer")
		assert.Equal(t, `["api.example.com"]`, certificate(t, "root-edge-server", "{.spec.dnsNames}"),
			"with an issuerRef, the template's names replace the generated ones")
		a := args(t, "edge-front-proxy")
		for _, want := range []string{"--oidc-issuer-url=https://dex.example.com", "--oidc-ca-file=/etc/kcp/oidc-ca/ca.crt",
			"--authentication-drop-groups=system:masters,system:kcp:logical-cluster-admin,system:kcp:initializer:*,system:kcp:terminator:*", "--requestheader-allowed-names=kcp-front-proxy,kcp-mounts-proxy"} {
			assert.Contains(t, a, want)
		}
		assert.Equal(t, "LoadBalancer", get(t, "service/edge-front-proxy", "{.spec.type}"))
		assert.Equal(t, "443", get(t, "service/edge-front-proxy", "{.spec.ports[0].port}"))
		assert.Equal(t, "1", get(t, "pdb/edge-front-proxy", "{.spec.maxUnavailable}"))
		assert.Contains(t, get(t, "configmap/edge-config", "{.data.path-mapping\\.yaml}"), "/services/custom/")
		assert.Contains(t, string(decodeSecret(t, ns, "root-edge-merged-client-ca", "tls.crt")), strings.TrimSpace(extraClientCA))
		assert.Contains(t, string(decodeSecret(t, ns, "root-edge-merged-ca-bundle", "tls.crt")), strings.TrimSpace(extraCA))

		// The deprecated externalHostname is read as external.hostname.
		assert.Contains(t, certificate(t, "root-legacy-server", "{.spec.dnsNames}"), "legacy.example.com")
		assert.Contains(t, kubectl(t, "get", "frontproxy", "legacy", "-n", ns), "legacy.example.com", "the Hostname column")
	})

	t.Run("VirtualWorkspaces", func(t *testing.T) {
		// kcp's own server, which shard-2 hands its virtual workspaces to.
		assert.Contains(t, args(t, "shard-2-shard-kcp"), "--shard-virtual-workspace-url=https://vw-shard-2.example.com:6443", "kcpVirtualWorkspace")
		assert.Contains(t, args(t, "shard-2-shard-kcp"), "--run-virtual-workspaces=false")
		a := args(t, "shard-2-virtual-workspace")
		assert.Equal(t, "/virtual-workspaces", get(t, "deployment/shard-2-virtual-workspace", "{.spec.template.spec.containers[0].command[0]}"))
		for _, want := range []string{"--cache-kubeconfig=/etc/kcp-virtual-workspaces/cache-kubeconfig/kubeconfig", "-v=4", "--requestheader-allowed-names=kcp-front-proxy,kcp-root-shard-proxy"} {
			assert.Contains(t, a, want)
		}
		assert.Equal(t, "3", get(t, "deployment/shard-2-virtual-workspace", "{.spec.replicas}"))
		assert.Equal(t, "RSA", certificate(t, "shard-2-virtual-workspace-server", "{.spec.privateKey.algorithm}"), "certificateTemplates.server")
		assert.Contains(t, certificate(t, "shard-2-virtual-workspace-server", "{.spec.dnsNames}"), "vw-shard-2.example.com")
		assert.Contains(t, string(decodeSecret(t, ns, "shard-2-virtual-workspace-merged-client-ca", "tls.crt")), strings.TrimSpace(extraClientCA), "clientCABundleRef")

		// The custom server: its binary, only the flags every aggregated apiserver takes, the
		// user's identities, and its init container.
		const d = "deployment/access-virtual-workspace"
		assert.Equal(t, "/access-vw", get(t, d, "{.spec.template.spec.containers[0].command[0]}"))
		assert.Equal(t, "ghcr.io/kcp-dev/contrib-access-virtual-workspace:latest", get(t, d, "{.spec.template.spec.containers[0].image}"))
		a = args(t, "access-virtual-workspace")
		assert.Empty(t, withPrefix(a, "--cache-kubeconfig"), "kcp's own flags stay out of a custom server's command line")
		assert.Empty(t, withPrefix(a, "--shard-external-url"))
		assert.Equal(t, []string{"--apiexport-endpointslice=access.contrib.kcp.io", "--endpoint-base=https://api.example.com:443/clusters/"}, a[len(a)-2:], "extraArgs last")
		assert.Equal(t, "/access-vw-init", get(t, d, "{.spec.template.spec.initContainers[0].command[0]}"))
		assert.Equal(t, "--workspace-prefix=root:access", get(t, d, "{.spec.template.spec.initContainers[0].args[1]}"))
		assert.Contains(t, get(t, d, "{.spec.template.spec.volumes[*].secret.secretName}"), "access-vw-bootstrap-kubeconfig")
		assert.Equal(t, "api.example.com", get(t, d, "{.spec.template.spec.hostAliases[0].hostnames[0]}"))
		assert.Equal(t, "512Mi", get(t, d, "{.spec.template.spec.containers[0].resources.limits.memory}"))
		out, _ := stack.Kubectl(t.Context(), "get", "certificate", "access-virtual-workspace-client", "-n", ns)
		assert.Contains(t, out, "NotFound", "with the user's identities, no admin identity is issued")

		// kcp-operator's FrontProxy of the sample routes /services/access to it, with the
		// files of the built-in /services/ mapping.
		mapping := frontProxyMapping(t, ns, "frontproxy-sample-config")
		assert.Equal(t, "https://access-virtual-workspace."+ns+".svc.cluster.local:6443", mapping["/services/access"].Backend)
		assert.Equal(t, identityFiles(mapping["/services/"]), identityFiles(mapping["/services/access"]))
	})

	t.Run("ContribVirtualWorkspaces", func(t *testing.T) {
		// mcp.yaml: the serve subcommand, its own identity (minted by the sample's Kubeconfig,
		// capped at the server's maximum validity), extraArgs last.
		d := "deployment/mcp-virtual-workspace"
		assert.Equal(t, "/mcp-virtual-workspace serve", get(t, d, "{.spec.template.spec.containers[0].command[*]}"))
		a := args(t, "mcp-virtual-workspace")
		assert.Equal(t, []string{"--access-url=https://example.operator.kcp.io:6443/services/access", "--access-ca-file=/etc/kcp/tls/ca/root/tls.crt"},
			a[len(a)-2:], "extraArgs last")
		assert.Contains(t, get(t, d, "{.spec.template.spec.volumes[*].secret.secretName}"), "mcp-vw-server-kubeconfig")
		// ephemeral-resources.yaml: its config file from the user's ConfigMap.
		d = "deployment/ephemeral-virtual-workspace"
		assert.Contains(t, args(t, "ephemeral-virtual-workspace"), "--ephemeral-config=/etc/ephemeral/config/ephemeral-config.yaml")
		assert.Contains(t, get(t, d, "{.spec.template.spec.volumes[*].configMap.name}"), "ephemeral-vw-config")
		// Their FrontProxy patches, merged: each path to its VirtualWorkspace's Service with the
		// files of the built-in /services/ mapping.
		mapping := frontProxyMapping(t, ns, "frontproxy-sample-config")
		for path, vw := range map[string]string{"/services/mcp": "mcp", "/services/ephemeral-buckets": "ephemeral"} {
			assert.Equal(t, "https://"+vw+"-virtual-workspace."+ns+".svc.cluster.local:6443", mapping[path].Backend, path)
			assert.Equal(t, identityFiles(mapping["/services/"]), identityFiles(mapping[path]), path)
		}
	})

	t.Run("Authorization", func(t *testing.T) {
		a := args(t, "shard-authz-shard-kcp")
		for _, want := range []string{"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
			"--authorization-order=AlwaysAllowGroups,AlwaysAllowPaths,Webhook,RBAC",
			"--authorization-webhook-config-file=/etc/kcp/authorization/webhook/kubeconfig"} {
			assert.Contains(t, a, want)
		}
	})

	t.Run("Kubeconfigs", func(t *testing.T) {
		admin, err := clientcmd.Load(decodeSecret(t, ns, "kcp-admin-kubeconfig", "kubeconfig"))
		require.NoError(t, err)
		for _, c := range admin.Clusters {
			assert.True(t, strings.HasPrefix(c.Server, "https://api.example.com:443"), c.Server)
			assert.Contains(t, string(c.CertificateAuthorityData), strings.TrimSpace(extraCA),
				"a kubeconfig toward the front proxy trusts its caBundleSecretRef: its certificate comes from another issuer")
		}
		assert.Equal(t, "https://api.example.com:443/clusters/root", admin.Clusters[admin.Contexts[admin.CurrentContext].Cluster].Server)
		assert.Equal(t, "720h0m0s", get(t, "certificate/kubeconfig-kcp-admin", "{.spec.duration}"),
			"spec.validity 8766h is issued for the server's maximum")
		assert.Equal(t, "720h0m0s", get(t, "kubeconfig/kcp-admin", "{.status.validity}"), "the effective validity")
		shardAdmin, err := clientcmd.Load(decodeSecret(t, ns, "shard-admin-kubeconfig", "kubeconfig"))
		require.NoError(t, err)
		assert.True(t, strings.HasSuffix(shardAdmin.Clusters[shardAdmin.Contexts[shardAdmin.CurrentContext].Cluster].Server, "/clusters/2x8k4qkz6h9r1vq0"),
			"a logical cluster name as targetWorkspace")
		assert.Equal(t, "platform", get(t, "certificate/kubeconfig-root-admin", "{.metadata.labels.team}"), "certificateTemplate.metadata")
		assert.Equal(t, "platform", get(t, "certificate/kubeconfig-root-admin", "{.spec.subject.organizationalUnits[0]}"), "certificateTemplate.spec.subject")
		assert.NotContains(t, get(t, "certificate/kubeconfig-root-admin", "{.spec.subject}"), "kubeconfig:", "no spec.authorization, no group")
		assert.Contains(t, get(t, "certificate/kubeconfig-bound", "{.spec.subject.organizations}"), "kubeconfig:"+ns+":bound",
			"spec.authorization: the group its bindings name (kcp-operator's kubeconfig:<name>, with the namespace); Available without kcp, which is the bindings' own condition")
	})
}

// withPrefix are the arguments that start with prefix.
func withPrefix(args []string, prefix string) []string {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, prefix) {
			out = append(out, a)
		}
	}
	return out
}
