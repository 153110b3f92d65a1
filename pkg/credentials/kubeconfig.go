package credentials

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"fmt"
	"slices"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

// kubeconfigUser is the one user of a minted kubeconfig.
const kubeconfigUser = "kcp"

// kubeconfigCluster is a cluster of a kubeconfig, with the context of the same name on it.
type kubeconfigCluster struct{ name, server string }

// Kubeconfig renders a kubeconfig file for the target: the default context on
// /clusters/<workspace>, the base context on the target's URL, and for a shard the
// shard-base context too, all trusting caBundle and presenting the client certificate and
// key. The file is exactly what client-go's clientcmd.Write makes of it.
func Kubeconfig(t Target, workspace string, caBundle, certPEM, keyPEM []byte) ([]byte, error) {
	if workspace == "" {
		workspace = operatorv1alpha1.DefaultWorkspace
	}
	clusters := []kubeconfigCluster{{DefaultContext, t.URL + "/clusters/" + workspace}, {BaseContext, t.URL}}
	if t.ShardBase {
		clusters = append(clusters, kubeconfigCluster{kcp.ShardBaseContext, t.URL})
	}
	if data, ok := kubeconfigYAML(clusters, caBundle, certPEM, keyPEM); ok {
		return data, nil
	}
	data, err := kubeconfigClientcmd(clusters, caBundle, certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("writing a kubeconfig for %s: %w", t, err)
	}
	return data, nil
}

// kubeconfigClientcmd writes the kubeconfig with clientcmd.Write: a conversion to v1, JSON,
// then YAML through a YAML parser and emitter, which costs more than signing the
// certificate in it does.
func kubeconfigClientcmd(clusters []kubeconfigCluster, caBundle, certPEM, keyPEM []byte) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.AuthInfos[kubeconfigUser] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	for _, c := range clusters {
		cfg.Clusters[c.name] = &clientcmdapi.Cluster{Server: c.server, CertificateAuthorityData: caBundle}
		cfg.Contexts[c.name] = &clientcmdapi.Context{Cluster: c.name, AuthInfo: kubeconfigUser}
	}
	cfg.CurrentContext = DefaultContext
	return clientcmd.Write(*cfg)
}

// kubeconfigYAML writes the same bytes as kubeconfigClientcmd directly, when every value is a
// plain YAML scalar that the YAML emitter would leave unquoted (see plainScalar); otherwise it
// says no, and the caller takes the general path.
func kubeconfigYAML(clusters []kubeconfigCluster, caBundle, certPEM, keyPEM []byte) ([]byte, bool) {
	ca, cert, key := base64.StdEncoding.EncodeToString(caBundle), base64.StdEncoding.EncodeToString(certPEM), base64.StdEncoding.EncodeToString(keyPEM)
	// clientcmd leaves out empty data, and writes a user without any as {}.
	if ca == "" || cert == "" || key == "" || !plainScalar(ca) || !plainScalar(cert) || !plainScalar(key) {
		return nil, false
	}
	for _, c := range clusters {
		if !plainScalar(c.name) || !plainScalar(c.server) {
			return nil, false
		}
	}
	// clientcmd lists clusters and contexts by name, and YAML's keys sort.
	clusters = slices.SortedFunc(slices.Values(clusters), func(a, b kubeconfigCluster) int { return cmp.Compare(a.name, b.name) })

	var b bytes.Buffer
	b.Grow(len(clusters)*(len(ca)+256) + len(cert) + len(key) + 256)
	write := func(parts ...string) {
		for _, p := range parts {
			b.WriteString(p)
		}
	}
	write("apiVersion: v1\nclusters:\n")
	for _, c := range clusters {
		write("- cluster:\n    certificate-authority-data: ", ca, "\n    server: ", c.server, "\n  name: ", c.name, "\n")
	}
	write("contexts:\n")
	for _, c := range clusters {
		write("- context:\n    cluster: ", c.name, "\n    user: ", kubeconfigUser, "\n  name: ", c.name, "\n")
	}
	write("current-context: ", DefaultContext, "\nkind: Config\nusers:\n- name: ", kubeconfigUser, "\n  user:\n",
		"    client-certificate-data: ", cert, "\n    client-key-data: ", key, "\n")
	return b.Bytes(), true
}

// plainScalar says whether the YAML emitter writes s as a plain scalar, conservatively: it
// starts with a letter, holds only letters, digits and +/=:._- (base64, URLs, names), does
// not end with a colon, and is not a word YAML 1.1 reads as a boolean or null. Anything else
// takes the general path.
func plainScalar(s string) bool {
	if s == "" || !isLetter(s[0]) || s[len(s)-1] == ':' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isLetter(c), '0' <= c && c <= '9', c == '+', c == '/', c == '=', c == ':', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return !yamlWords[s]
}

// yamlWords are the letter-only words a YAML 1.1 parser reads as a boolean or null.
var yamlWords = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "n": true, "N": true, "no": true, "No": true, "NO": true,
	"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true, "null": true, "Null": true, "NULL": true,
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
