package e2e

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/test/framework"
)

// linkedShardManifest is the Shard name joined over the link of the bootstrap Secret secret.
func linkedShardManifest(name, secret string) string {
	return strings.NewReplacer("NAME", name, "SECRET", secret).Replace(`apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: NAME
spec:
  rootShard: {link: {secretRef: {name: SECRET}}}
  etcd: {endpoints: ["https://etcd-NAME:2379"]}
`)
}

// crossClusterLink is a Link of the RootShard root admitting Shards, whose serving
// certificates carry the in-cluster names of the Shard shard-1 in namespace remote of another
// cluster: its Service's name alone, and with the namespace, .svc and .svc.cluster.local.
func crossClusterLink(name, identity, remote string) string {
	return `apiVersion: operator.kcp.io/v1alpha1
kind: Link
metadata:
  name: ` + name + `
spec:
  rootShardRef: {name: root}
  identity: ` + identity + `
  consumers: [Shard]
  dnsNames: ["shard-1-shard-kcp", "*.` + remote + `", "*.` + remote + `.svc", "*.` + remote + `.svc.cluster.local"]
`
}

// caPublicKeys are the public keys of every CA certificate of the stack s's Secrets of ns:
// a certificate with basic constraints that make it a CA, anywhere in any key's PEM.
func caPublicKeys(t *testing.T, s *framework.Stack, ns string) []crypto.PublicKey {
	t.Helper()
	var keys []crypto.PublicKey
	for _, data := range allSecretValues(t, s, ns) {
		for _, c := range certsIn(data) {
			if c.IsCA {
				keys = append(keys, c.PublicKey)
			}
		}
	}
	require.NotEmpty(t, keys)
	return keys
}

// allSecretValues are the values of every key of every Secret of ns ("" for every namespace)
// of the stack s, by "namespace/name/key".
func allSecretValues(t *testing.T, s *framework.Stack, ns string) map[string][]byte {
	t.Helper()
	args := []string{"get", "secrets", "-o", "json"}
	if ns == "" {
		args = append(args, "-A")
	} else {
		args = append(args, "-n", ns)
	}
	var list struct {
		Items []struct {
			Metadata struct{ Namespace, Name string }
			Data     map[string]string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(kubectlOn(t, s, args...)), &list))
	out := map[string][]byte{}
	for _, item := range list.Items {
		for k, v := range item.Data {
			data, err := base64.StdEncoding.DecodeString(v)
			require.NoError(t, err)
			out[item.Metadata.Namespace+"/"+item.Metadata.Name+"/"+k] = data
		}
	}
	return out
}

// logLinkedShardOnFailure logs, once t failed, the conditions of the Shards, Certificates
// and CertificateRequests of ns in the second cluster.
func logLinkedShardOnFailure(t *testing.T, second *framework.Stack, ns string) {
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := second.Kubectl(context.Background(), "get", "shard,certificates,certificaterequests", "-n", ns, "-o",
				`jsonpath={range .items[*]}{.kind} {.metadata.name}: {range .status.conditions[*]}{.type}={.status} {.reason} {.message}; {end}{"\n"}{end}`)
			t.Logf("the second cluster's linked Shard:\n%s", out)
		}
	})
}

// assertNoCAKeyIn asserts that no Secret of the stack s holds the private key of one of the
// CA public keys cas.
func assertNoCAKeyIn(t *testing.T, s *framework.Stack, cas []crypto.PublicKey) {
	t.Helper()
	for where, data := range allSecretValues(t, s, "") {
		for _, key := range privateKeysIn(data) {
			for _, ca := range cas {
				assert.False(t, key.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(ca),
					"the Secret key %s of the second cluster holds the private key of a CA of the home", where)
			}
		}
	}
}

// privateKeysIn are the private keys of the PEM data.
func privateKeysIn(data []byte) []crypto.Signer {
	var out []crypto.Signer
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		var key any
		var err error
		switch block.Type {
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(block.Bytes)
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		default:
			continue
		}
		if signer, ok := key.(crypto.Signer); err == nil && ok {
			out = append(out, signer)
		}
	}
	return out
}

// linkedShardAcrossClusters declares, in a new namespace named after home on the test's
// stack (stackOf), a RootShard root and its Link eu-1 for the namespace remote of a second
// cluster, which it starts; carries the Link's bootstrap Secret there once; and creates the
// Shard shard-1 linked by it. It returns the home namespace and the second cluster.
func linkedShardAcrossClusters(t *testing.T, home, remote string) (string, *framework.Stack) {
	t.Helper()
	ns := namespace(t, home)
	givenRootShard(t, ns, withSpec("  shardBaseURL: "+rootShardBaseURL+"\n"))
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, crossClusterLink("eu-1", "eu-1.links.example.com", remote)))
	waitFor(t, ns, "link/eu-1", "Ready")

	second := startSecondCluster(t)
	kubectlOn(t, second, "create", "namespace", remote)
	copyReference(t, stackOf(t), ns, linkpki.BootstrapName("eu-1"), second, remote)
	kubectlOn(t, second, "apply", "-n", remote, "-f", writeManifest(t, linkedShardManifest("shard-1", linkpki.BootstrapName("eu-1"))))
	return ns, second
}

// TestLinkedShardAcrossClusters: a Shard in a second host cluster joins a RootShard of the
// first over a Link, from its bootstrap Secret carried once: it becomes Available, every
// certificate of it chains to the home's root CA, no Secret of the second cluster holds the
// private key of any of the home's CAs, and the home's Link lists it. Deleting the Link
// revokes the remote at once, which keeps serving with what it has.
func TestLinkedShardAcrossClusters(t *testing.T) {
	parallel(t, alone)
	const remote = "xlink-remote"
	ns, second := linkedShardAcrossClusters(t, "xlink-home", remote)
	logLinkedShardOnFailure(t, second, remote)
	waitForOn(t, second, remote, "shard/shard-1", "LinkReady")
	waitForOn(t, second, remote, "shard/shard-1", "Available")
	assert.Equal(t, "Running", kubectlOn(t, second, "get", "shard", "shard-1", "-n", remote, "-o", "jsonpath={.status.phase}"))

	certs := assertCertificatesChainTo(t, second, remote, secretCert(t, ns, "root-ca"))
	assert.NotEmpty(t, certs)

	// Every CA certificate the test can see: the home's, and those the second cluster's
	// Secrets hold (the bundles the link brought among them).
	homeCAs := append(caPublicKeys(t, stack, ns), caPublicKeys(t, second, remote)...)
	assertNoCAKeyIn(t, second, homeCAs)

	require.Eventually(t, func() bool {
		out := kubectl(t, "get", "link", "eu-1", "-n", ns, "-o", "jsonpath={.status.consumers}")
		return strings.Contains(out, `"name":"shard-1"`) && strings.Contains(out, `"namespace":"`+remote+`"`)
	}, 3*time.Minute, 2*time.Second, "the home's Link lists the linked Shard")
	assert.Contains(t, kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", "jsonpath={.status.shards}"), `"link":"eu-1"`)

	// Deleting the declaration revokes the remote at once: the listener refuses it, the
	// remote says its link is down, and keeps serving with what it has: nothing rolls.
	deployment := kubectlOn(t, second, "get", "deployments", "-n", remote, "-o", `jsonpath={range .items[*]}{.metadata.name}={.metadata.generation} {end}`)
	kubectl(t, "delete", "link", "eu-1", "-n", ns)
	require.Eventually(t, func() bool {
		return kubectlOn(t, second, "get", "shard", "shard-1", "-n", remote, "-o", `jsonpath={.status.conditions[?(@.type=="LinkReady")].status}`) == "False"
	}, 3*time.Minute, 2*time.Second, "the remote's LinkReady goes False once its Link is deleted")
	assert.Eventually(t, func() bool {
		return strings.Contains(kubectlOn(t, second, "get", "shard", "shard-1", "-n", remote, "-o", `jsonpath={.status.conditions[?(@.type=="LinkReady")].message}`), "403")
	}, time.Minute, 2*time.Second, "the listener refuses the revoked remote when it connects again")
	assert.Equal(t, "True", kubectlOn(t, second, "get", "shard", "shard-1", "-n", remote, "-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`),
		"the Shard still serves")
	assert.Equal(t, deployment, kubectlOn(t, second, "get", "deployments", "-n", remote, "-o", `jsonpath={range .items[*]}{.metadata.name}={.metadata.generation} {end}`),
		"no Deployment changed")
}
