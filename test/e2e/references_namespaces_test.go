package e2e

import (
	"crypto/x509"
	"encoding/pem"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kcp-setups/apiserver/test/framework"
)

// joinedShardManifest is a Shard that joins its RootShard through a copy of its shard-join
// Secret named secret.
func joinedShardManifest(name, secret string) string {
	return strings.NewReplacer("NAME", name, "SECRET", secret).Replace(`apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: NAME
spec:
  rootShard: {secretRef: {name: SECRET}}
  etcd: {endpoints: ["https://etcd-NAME:2379"]}
`)
}

// joinedFrontProxyManifest is the FrontProxy edge, run from a copy of root-front-proxy-join.
const joinedFrontProxyManifest = `apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata:
  name: edge
spec:
  rootShard: {secretRef: {name: root-front-proxy-join}}
  external: {hostname: edge.example.com, port: 443}
`

// carol is the identity the tests mint for, as the admin (who may impersonate anyone).
const (
	carolRequest = `{"spec":{"username":"carol","groups":["team-c"]}}`
	carolWhoami  = `carol ["team-c","system:authenticated"]`
)

// TestReferencesAcrossNamespaces: a RootShard in one namespace, and in another a Shard and a
// FrontProxy that name copies of its join Secrets, made with the one-liner of docs/references.md. They
// wait for their copies, then realize themselves from them: everything runs, every
// certificate chains to the RootShard's root CA, no pod mounts a received key, and a
// credential minted from the FrontProxy works against the RootShard's kcp. A copy of the
// wrong kind is refused.
func TestReferencesAcrossNamespaces(t *testing.T) {
	parallel(t, alone)
	a, b := namespace(t, "refs-a"), namespace(t, "refs-b")
	givenRootShard(t, a, until())
	// The consumers come first, naming copies that are not there yet.
	kubectl(t, "apply", "-n", b, "-f", writeManifest(t, joinedShardManifest("shard-1", "root-shard-join")+"---\n"+joinedFrontProxyManifest))
	waitForReason(t, b, "shard/shard-1", "ReferenceValid", "False", "ReferenceSecretNotFound")
	waitForReason(t, b, "frontproxy/edge", "ReferenceValid", "False", "ReferenceSecretNotFound")
	assert.Contains(t, conditionMessage(t, stack, b, "shard/shard-1", "ReferenceValid"), "root-shard-join", "the condition names the missing Secret")
	assert.NotEqual(t, "Running", kubectl(t, "get", "shard", "shard-1", "-n", b, "-o", "jsonpath={.status.phase}"))

	// The copies come: both heal by themselves.
	copyReference(t, stack, a, "root-shard-join", stack, b)
	copyReference(t, stack, a, "root-front-proxy-join", stack, b)
	// A copy that lost its label is there, and the status says so and how to fix it.
	kubectl(t, "label", "secret", "root-shard-join", "-n", b, "operator.kcp.io/reference-")
	waitForReason(t, b, "shard/shard-1", "ReferenceValid", "False", "ReferenceSecretNotLabelled")
	assert.Contains(t, conditionMessage(t, stack, b, "shard/shard-1", "ReferenceValid"),
		"kubectl label secret root-shard-join -n "+b+" operator.kcp.io/reference=shard-join")
	kubectl(t, "label", "secret", "root-shard-join", "-n", b, "operator.kcp.io/reference=shard-join")
	for _, o := range []string{"shard/shard-1", "frontproxy/edge"} {
		waitFor(t, b, o, "ReferenceValid")
		waitFor(t, b, o, "Available")
		assert.Equal(t, "Running", kubectl(t, "get", o, "-n", b, "-o", "jsonpath={.status.phase}"), o)
	}
	assert.Empty(t, strings.TrimSpace(kubectl(t, "get", "rootshards", "-n", b, "-o", "name")), "the joined RootShard exists only in memory")
	assert.Empty(t, kubectl(t, "get", "rootshard", "root", "-n", a, "-o", "jsonpath={.status.shards[*].name}"),
		"the RootShard lists the shards of its own namespace only")

	// Both reach the root shard in a, at the URL of the copy.
	rootURL := "https://root-kcp." + a + ".svc.cluster.local:6443"
	assertReachesRootShard(t, stack, b, "shard-1", rootURL)
	assert.Contains(t, kubectl(t, "get", "configmap", "edge-config", "-n", b, "-o", "jsonpath={.data.path-mapping\\.yaml}"), "backend: "+rootURL,
		"the FrontProxy's path mappings")

	// Every certificate in b chains to the RootShard's root CA in a.
	root := secretCert(t, a, "root-ca")
	issued := assertCertificatesChainTo(t, stack, b, root)
	for _, owner := range []string{"shard=shard-1", "frontproxy=edge"} {
		assert.NotEmpty(t, strings.TrimSpace(kubectl(t, "get", "certificates", "-n", b, "-l", "operator.kcp.io/"+owner, "-o", "name")),
			"the %s has certificates of its own", owner)
	}
	assert.Contains(t, issued, "shard-1-server")
	assert.Contains(t, issued, "shard-1-client")
	verifyChain(t, secretCert(t, b, "shard-1-client"), secretCert(t, a, "root-client-ca"), root, x509.ExtKeyUsageClientAuth)
	assertNoMountedCAKey(t, stack, b)

	// A credential minted from the FrontProxy in b is signed by the RootShard's
	// front-proxy-client CA, and the RootShard's kcp (its stand-in) knows who it is.
	minted := mintCarol(t, stack, b, "frontproxies", "edge")
	assert.NoError(t, minted.cert.CheckSignatureFrom(secretCert(t, a, "root-front-proxy-client-ca")), "signed by the RootShard's front-proxy-client CA")
	standIn, err := stack.StartStandIn(t.Context(), rootShardPKI(t, a, "root"))
	require.NoError(t, err)
	t.Cleanup(standIn.Stop)
	out, err := whoami(t, standIn, minted.path)
	require.NoError(t, err, out)
	assert.Equal(t, carolWhoami, out)

	// A Secret of another kind under the name a Shard references is refused, and nothing is
	// realized from it.
	copyReference(t, stack, a, "root-kubeconfig-issuer", stack, b)
	kubectl(t, "apply", "-n", b, "-f", writeManifest(t, joinedShardManifest("wrong", "root-kubeconfig-issuer")))
	waitForReason(t, b, "shard/wrong", "ReferenceValid", "False", "ReferenceSecretInvalid")
	assert.Contains(t, conditionMessage(t, stack, b, "shard/wrong", "ReferenceValid"), "root-kubeconfig-issuer", "the condition names the Secret")
	assert.Empty(t, strings.TrimSpace(kubectl(t, "get", "deployments,certificates,issuers", "-n", b, "-l", "operator.kcp.io/shard=wrong", "-o", "name")),
		"nothing is realized from a refused Secret")
}

// mintedCredential is a minted kubeconfig: its client certificate, and the file it is in.
type mintedCredential struct {
	cert *x509.Certificate
	path string
}

// mintCarol mints a credential for carol from the kubeconfig subresource of resource/name
// (shards or frontproxies) in ns of the stack s, as its admin, once it answers.
func mintCarol(t *testing.T, s *framework.Stack, ns, resource, name string) mintedCredential {
	t.Helper()
	var minted kubeconfigResponse
	var stderr string
	var err error
	require.Eventually(t, func() bool {
		minted, stderr, err = mintOn(t, s, s.AdminKubeconfig, ns, resource, name, carolRequest)
		return err == nil
	}, 2*time.Minute, time.Second, "%s/%s's kubeconfig subresource mints: %s", resource, name, stderr)
	cert, path := clientCertOf(t, []byte(minted.Status.Kubeconfig))
	require.Equal(t, "carol", cert.Subject.CommonName)
	return mintedCredential{cert: cert, path: path}
}

// copyReference copies the reference Secret name from fromNS of src into toNS of dst with
// the one-liner of docs/references.md, once its owner has written it, and checks that the copy is what
// the page says: the type, the data and the reference label, and nothing of the owner's.
func copyReference(t *testing.T, src *framework.Stack, fromNS, name string, dst *framework.Stack, toNS string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, err := src.Kubectl(t.Context(), "get", "secret", name, "-n", fromNS, "-o", "name")
		return err == nil
	}, 3*time.Minute, time.Second, "the reference Secret %s/%s is written", fromNS, name)
	out, err := framework.CopyReferenceSecret(t.Context(), src, fromNS, name, dst, toNS)
	require.NoError(t, err, out)

	kind := kubectlOn(t, src, "get", "secret", name, "-n", fromNS, "-o", `jsonpath={.metadata.labels.operator\.kcp\.io/reference}`)
	require.NotEmpty(t, kind)
	assert.Equal(t, "operator.kcp.io/"+kind+` {"operator.kcp.io/reference":"`+kind+`"}`,
		kubectlOn(t, dst, "get", "secret", name, "-n", toNS, "-o", "jsonpath={.type} {.metadata.labels}"), "the copy's type and labels")
	// Their names alone: kubectl's last-applied annotation would hold the data.
	assert.Empty(t, kubectlOn(t, dst, "get", "secret", name, "-n", toNS, "-o", `go-template={{range $k, $v := .metadata.annotations}}{{$k}} {{end}}`),
		"the copy has no annotation")
	// Compared without printing: the data are keys.
	data := `go-template={{range $k, $v := .data}}{{$k}}={{$v}};{{end}}`
	assert.True(t, kubectlOn(t, src, "get", "secret", name, "-n", fromNS, "-o", data) == kubectlOn(t, dst, "get", "secret", name, "-n", toNS, "-o", data),
		"the copy of %s holds the same data", name)
}

// assertCertificatesChainTo checks that the Secret of every cert-manager Certificate in ns
// of the stack s holds a certificate that chains to root, through the chain it holds, and
// returns the Certificates' names.
func assertCertificatesChainTo(t *testing.T, s *framework.Stack, ns string, root *x509.Certificate) []string {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(root)
	var names []string
	for _, line := range nonEmptyLines(kubectlOn(t, s, "get", "certificates", "-n", ns, "-o", `jsonpath={range .items[*]}{.metadata.name} {.spec.secretName}{"\n"}{end}`)) {
		name, secret, _ := strings.Cut(line, " ")
		names = append(names, name)
		chain := parseCerts(t, decodeSecretOn(t, s, ns, secret, "tls.crt"))
		intermediates := x509.NewCertPool()
		for _, c := range chain[1:] {
			intermediates.AddCert(c)
		}
		_, err := chain[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
		assert.NoError(t, err, "Certificate %s/%s (%s) does not chain to %s", ns, name, chain[0].Subject, root.Subject)
	}
	require.NotEmpty(t, names, "no Certificate in %s", ns)
	return names
}

// assertNoMountedCAKey checks that no Deployment in ns of the stack s mounts the key of a
// CA Secret behind one of the namespace's Issuers: the received key pairs are the local
// Issuers', never a pod's.
func assertNoMountedCAKey(t *testing.T, s *framework.Stack, ns string) {
	t.Helper()
	caSecrets := nonEmptyLines(kubectlOn(t, s, "get", "issuers", "-n", ns, "-o", `jsonpath={range .items[*]}{.spec.ca.secretName}{"\n"}{end}`))
	require.NotEmpty(t, caSecrets, "the consumers issue from local CA Issuers")
	mounts := nonEmptyLines(kubectlOn(t, s, "get", "deployments", "-n", ns, "-o",
		`jsonpath={range .items[*]}{range .spec.template.spec.volumes[*]}{.secret.secretName} {.secret.items[*].key}{"\n"}{end}{end}`))
	for _, m := range mounts {
		secret, keys, _ := strings.Cut(m, " ")
		for _, ca := range caSecrets {
			if secret == ca {
				assert.NotEmpty(t, keys, "%s is mounted whole, its tls.key with it", ca)
				assert.NotContains(t, strings.Fields(keys), "tls.key", "%s's key is mounted", ca)
			}
		}
	}
}

// parseCerts parses every PEM certificate of data, at least one.
func parseCerts(t *testing.T, data []byte) []*x509.Certificate {
	t.Helper()
	certs := certsIn(data)
	require.NotEmpty(t, certs, "no PEM certificate")
	return certs
}

// certsIn is every PEM certificate of data up to the first that does not parse.
func certsIn(data []byte) []*x509.Certificate {
	var certs []*x509.Certificate
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			break
		}
		certs = append(certs, c)
	}
	return certs
}

// assertReachesRootShard checks that the Shard name in ns of the stack s reaches its root
// shard at url: the server of its kubeconfig toward the root shard.
func assertReachesRootShard(t *testing.T, s *framework.Stack, ns, name, url string) {
	t.Helper()
	cfg, err := clientcmd.Load(decodeSecretOn(t, s, ns, name+"-client-kubeconfig", "kubeconfig"))
	require.NoError(t, err)
	require.NotEmpty(t, cfg.Clusters)
	for _, c := range cfg.Clusters {
		assert.Equal(t, url, c.Server, "%s's kubeconfig toward the root shard", name)
	}
}

// conditionMessage is the message of object's condition on the stack s.
func conditionMessage(t *testing.T, s *framework.Stack, ns, object, condition string) string {
	t.Helper()
	return kubectlOn(t, s, "get", object, "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="`+condition+`")].message}`)
}

// clientKubeconfig writes a kubeconfig that reaches server (verified by serverCA for
// localhost, as the stand-ins serve) with a client certificate and key, and returns its path.
func clientKubeconfig(t *testing.T, server string, serverCA, cert, key []byte) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kcp"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: serverCA, TLSServerName: "localhost"}
	cfg.AuthInfos["client"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts["kcp"] = &clientcmdapi.Context{Cluster: "kcp", AuthInfo: "client"}
	cfg.CurrentContext = "kcp"
	path := filepath.Join(t.TempDir(), "client.kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, path))
	return path
}
