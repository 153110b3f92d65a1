package e2e

import (
	"crypto/x509"
	"encoding/base64"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kcp-setups/apiserver/test/framework"
)

// TestWholeSetup realizes a RootShard, a Shard, a FrontProxy and a CacheServer together:
// every Certificate of docs/PKI.md is issued with the right chain, the cache is wired into the
// shards, every object becomes Available and Running, and deleting them leaves nothing.
func TestWholeSetup(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "whole-setup")
	givenRootShard(t, ns, withSpec(`  cache:
    ref:
      name: cache
`), withObjects(shardManifest, `apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata:
  name: edge
spec:
  rootShard: {ref: {name: root}}
`, cacheServerManifest("cache")), until())
	objects := []string{"rootshard/root", "shard/shard-1", "frontproxy/edge", "cacheserver/cache"}
	for _, o := range objects {
		waitFor(t, ns, o, "Available")
	}
	for _, o := range objects {
		assert.Equal(t, "Running", kubectl(t, "get", o, "-n", ns, "-o", "jsonpath={.status.phase}"), o)
		assert.Equal(t, "True", kubectl(t, "get", o, "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="CertificatesReady")].status}`), o)
	}

	// Every Certificate of docs/PKI.md, and no other, is issued.
	want := []string{"kcp-pki-ca", "root-ca", "root-server-ca", "root-client-ca", "root-front-proxy-client-ca", "root-requestheader-client-ca",
		"root-service-account-ca", "root-etcd-client-ca", "root-etcd-peer-ca", "root-kcp-operator", "root-server", "root-client", "root-service-account", "root-logical-cluster-admin",
		"root-external-logical-cluster-admin", "shard-1-server", "shard-1-client", "shard-1-service-account", "shard-1-logical-cluster-admin",
		"shard-1-external-logical-cluster-admin", "root-mounts-proxy", "shard-1-mounts-proxy", "root-edge-server", "root-edge-kubeconfig", "root-edge-requestheader",
		"cache-ca", "cache-server", "cache-client-certificate", "root-proxy-server", "root-proxy-kubeconfig", "root-proxy-requestheader"}
	sort.Strings(want)
	got := nonEmptyLines(kubectl(t, "get", "certificates", "-n", ns, "-o",
		`jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`))
	var names []string
	for _, line := range got {
		name, ready, _ := strings.Cut(line, "=")
		names = append(names, name)
		assert.Equal(t, "True", ready, "Certificate %s is not Ready", name)
	}
	sort.Strings(names)
	assert.Equal(t, want, names)

	// The cache server's PKI stands alone below the namespace bootstrap.
	bootstrap, cacheCA := secretCert(t, ns, "kcp-pki-ca"), secretCert(t, ns, "cache-ca")
	cacheServing := secretCert(t, ns, "cache-server")
	verifyChain(t, cacheServing, cacheCA, bootstrap, x509.ExtKeyUsageServerAuth)
	cacheClient := secretCert(t, ns, "cache-client-certificate")
	verifyChain(t, cacheClient, cacheCA, bootstrap, x509.ExtKeyUsageClientAuth)
	assert.Equal(t, "cache-client", cacheClient.Subject.CommonName)
	assert.Equal(t, []string{"system:masters"}, cacheClient.Subject.Organization)
	clientCA := secretCert(t, ns, "cache-client-ca")
	assert.True(t, clientCA.Equal(cacheCA), "the cache server trusts its own CA alone")
	assert.Equal(t, 1, strings.Count(string(decodeSecret(t, ns, "cache-client-ca", "tls.crt")), "BEGIN CERTIFICATE"), "and not the chain above it")

	// The kubeconfig that the shards mount reaches the cache server and authenticates to it.
	cfg, err := clientcmd.Load(decodeSecret(t, ns, "cache-kubeconfig", "kubeconfig"))
	require.NoError(t, err)
	rest, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	require.NoError(t, err)
	assert.Equal(t, "https://cache-cache-server."+ns+".svc.cluster.local:6443", rest.Host)
	trusted := x509.NewCertPool()
	require.True(t, trusted.AppendCertsFromPEM(rest.CAData))
	_, err = cacheServing.Verify(x509.VerifyOptions{Roots: trusted, DNSName: "cache-cache-server." + ns + ".svc.cluster.local"})
	assert.NoError(t, err, "the kubeconfig's CA verifies the cache server")
	kubeconfigClient := parseCert(t, rest.CertData)
	_, err = kubeconfigClient.Verify(x509.VerifyOptions{Roots: trusted, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	assert.NoError(t, err, "the cache server's client CA verifies the kubeconfig's client certificate")
	assert.NotEmpty(t, rest.KeyData)

	// The cache server's Deployment, and the cache wired into every shard.
	deployment := func(name, path string) string {
		return kubectl(t, "get", "deployment", name, "-n", ns, "-o", "jsonpath="+path)
	}
	args := nonEmptyLines(deployment("cache-cache-server", `{range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}`))
	for _, want := range []string{"--tls-cert-file=/etc/cache-server/tls/server/tls.crt", "--tls-private-key-file=/etc/cache-server/tls/server/tls.key",
		"--client-ca-file=/etc/cache-server/tls/ca/tls.crt", "--root-directory=", "--embedded-etcd-directory=/var/etcd"} {
		assert.Contains(t, args, want)
	}
	assert.Equal(t, "/cache-server", deployment("cache-cache-server", "{.spec.template.spec.containers[0].command[0]}"))
	assert.Equal(t, "1", deployment("cache-cache-server", "{.spec.replicas}"))
	assert.Equal(t, "/var/etcd", deployment("cache-cache-server", `{.spec.template.spec.containers[0].volumeMounts[?(@.name=="etcd-data")].mountPath}`))
	assert.Equal(t, "6443", kubectl(t, "get", "service", "cache-cache-server", "-n", ns, "-o", "jsonpath={.spec.ports[0].port}"))
	for _, d := range []string{"root-kcp", "shard-1-shard-kcp"} {
		assert.Contains(t, nonEmptyLines(deployment(d, `{range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}`)),
			"--cache-kubeconfig=/etc/cache-server/kubeconfig/kubeconfig", "%s uses the cache server", d)
		assert.Equal(t, "cache-kubeconfig", deployment(d, `{.spec.template.spec.volumes[?(@.name=="cache-kubeconfig")].secret.secretName}`))
		assert.Equal(t, "/etc/cache-server/kubeconfig",
			deployment(d, `{.spec.template.spec.containers[0].volumeMounts[?(@.name=="cache-kubeconfig")].mountPath}`))
	}

	// The reference Secrets, selected by their label, of their type, owned by what they
	// refer to; their CA certificates are the CA Secrets' as cert-manager wrote them.
	for _, r := range []struct{ name, reference, owner string }{
		{"root-shard-join", "shard-join", "rootshard=root"}, {"root-front-proxy-join", "front-proxy-join", "rootshard=root"},
		{"root-kubeconfig-issuer", "kubeconfig-issuer", "rootshard=root"}, {"cache-cache-client", "cache-client", "cacheserver=cache"},
	} {
		assert.Equal(t, r.name+" operator.kcp.io/"+r.reference, kubectl(t, "get", "secrets", "-n", ns,
			"-l", "operator.kcp.io/reference="+r.reference+",operator.kcp.io/"+r.owner+",app.kubernetes.io/managed-by=kcp-setups",
			"-o", "jsonpath={range .items[*]}{.metadata.name} {.type}{end}"))
	}
	for ref, cas := range map[string][]string{
		"root-shard-join":        {"root-ca", "server-ca", "client-ca", "requestheader-client-ca", "service-account-ca", "etcd-client-ca", "etcd-peer-ca"},
		"root-front-proxy-join":  {"server-ca", "client-ca", "requestheader-client-ca"},
		"root-kubeconfig-issuer": {"front-proxy-client-ca"},
	} {
		for _, ca := range cas {
			caSecret := "root-" + ca
			if ca == "root-ca" {
				caSecret = ca
			}
			assert.Equal(t, decodeSecret(t, ns, caSecret, "tls.crt"), decodeSecret(t, ns, ref, ca+".crt"), "%s: %s", ref, ca)
		}
	}
	assert.True(t, parseCert(t, decodeSecret(t, ns, "cache-cache-client", "ca.crt")).Equal(cacheCA), "the cache server's CA")
	assert.Equal(t, 1, strings.Count(string(decodeSecret(t, ns, "cache-cache-client", "ca.crt")), "BEGIN CERTIFICATE"), "alone")
	assert.Equal(t, decodeSecret(t, ns, "cache-client-certificate", "tls.crt"), decodeSecret(t, ns, "cache-cache-client", "tls.crt"))

	// Deleting the CacheServer removes what it had; the RootShard still uses the bootstrap.
	kubectl(t, "delete", "cacheserver", "cache", "-n", ns, "--timeout=2m")
	for _, kind := range []string{"deployments", "services", "certificates", "issuers", "secrets"} {
		assert.Empty(t, strings.TrimSpace(kubectl(t, "get", kind, "-n", ns, "-l", "operator.kcp.io/cacheserver=cache", "-o", "name")),
			"%s of the cache server left behind", kind)
	}
	assert.NotEmpty(t, kubectl(t, "get", "issuer", "kcp-pki-ca", "-n", ns, "-o", "name"), "the RootShard still uses the bootstrap")
	require.Eventually(t, func() bool {
		out, _ := stack.Kubectl(t.Context(), "get", "rootshard", "root", "-n", ns,
			"-o", `jsonpath={.status.conditions[?(@.type=="ReferenceValid")].reason}`)
		return out == "CacheServerNotFound"
	}, time.Minute, time.Second, "the RootShard says its cache is gone")

	// Deleting everything leaves nothing the controllers made.
	kubectl(t, "delete", "frontproxies,shards,rootshards", "--all", "-n", ns, "--timeout=3m")
	for _, kind := range []string{"deployments", "poddisruptionbudgets", "services", "configmaps", "certificates", "issuers", "secrets"} {
		assert.Empty(t, strings.TrimSpace(kubectl(t, "get", kind, "-n", ns, "-l", "app.kubernetes.io/managed-by=kcp-setups", "-o", "name")),
			"%s left behind", kind)
	}
	assert.Empty(t, strings.TrimSpace(kubectl(t, "get", "kcp", "-n", ns, "-o", "name")))
}

// decodeSecret reads one key of a Secret.
func decodeSecret(t *testing.T, ns, name, key string) []byte {
	t.Helper()
	return decodeSecretOn(t, stack, ns, name, key)
}

// decodeSecretOn is decodeSecret on the stack s.
func decodeSecretOn(t *testing.T, s *framework.Stack, ns, name, key string) []byte {
	t.Helper()
	b64 := kubectlOn(t, s, "get", "secret", name, "-n", ns, "-o", "jsonpath={.data."+strings.ReplaceAll(key, ".", "\\.")+"}")
	data, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err)
	return data
}
