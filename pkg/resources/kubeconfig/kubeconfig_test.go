package kubeconfig

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

func rootShard() *operatorv1alpha1.RootShard {
	return &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 443}}}
}

func shard() *operatorv1alpha1.Shard {
	return &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: "beta", Namespace: "team-a"},
		Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}}}
}

func frontProxy() *operatorv1alpha1.FrontProxy {
	return &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "team-a"},
		Spec: operatorv1alpha1.FrontProxySpec{
			RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}},
			External:  &operatorv1alpha1.FrontProxyExternalConfig{Hostname: "edge.example.com", Port: 8443},
		}}
}

// minimal is a Kubeconfig for a root shard with nothing but the required fields.
func minimal(t *testing.T) Kubeconfig {
	kc := &operatorv1alpha1.Kubeconfig{ObjectMeta: metav1.ObjectMeta{Name: "admin", Namespace: "team-a"},
		Spec: operatorv1alpha1.KubeconfigSpec{
			Target:    operatorv1alpha1.KubeconfigTarget{RootShardRef: &corev1.LocalObjectReference{Name: "root"}},
			Username:  "admin",
			Validity:  metav1.Duration{Duration: 24 * time.Hour},
			SecretRef: corev1.LocalObjectReference{Name: "admin-kubeconfig"},
		}}
	target, err := TargetOf(kc, rootShard(), nil, nil)
	require.NoError(t, err)
	return Kubeconfig{Kubeconfig: kc, Target: target}
}

// loaded is a Kubeconfig for a front proxy with groups, a workspace, ClusterRoles to bind
// and a certificate template that tries to override what it may not.
func loaded(t *testing.T) Kubeconfig {
	kc := &operatorv1alpha1.Kubeconfig{ObjectMeta: metav1.ObjectMeta{Name: "ci", Namespace: "team-a"},
		Spec: operatorv1alpha1.KubeconfigSpec{
			Target:          operatorv1alpha1.KubeconfigTarget{FrontProxyRef: &corev1.LocalObjectReference{Name: "edge"}},
			TargetWorkspace: "root:team-a",
			Username:        "ci-bot",
			Groups:          []string{"team-a:developers", "ci"},
			Validity:        metav1.Duration{Duration: 30 * 24 * time.Hour},
			SecretRef:       corev1.LocalObjectReference{Name: "ci-kubeconfig"},
			Authorization: &operatorv1alpha1.KubeconfigAuthorization{ClusterRoleBindings: operatorv1alpha1.KubeconfigClusterRoleBindings{
				ClusterRoles: []string{"view", "system:kcp:workspace:access"},
			}},
			CertificateTemplate: &operatorv1alpha1.CertificateTemplate{
				Metadata: &operatorv1alpha1.MetadataTemplate{
					Labels:      map[string]string{"team": "a", pki.OwnerLabel(Kind): "someone-else"},
					Annotations: map[string]string{"example.com/owner": "ci"},
				},
				Spec: &operatorv1alpha1.CertificateSpecTemplate{
					Subject:        &operatorv1alpha1.X509Subject{OrganizationalUnits: []string{"platform"}},
					Duration:       &metav1.Duration{Duration: 365 * 24 * time.Hour},
					RenewBefore:    &metav1.Duration{Duration: 48 * time.Hour},
					PrivateKey:     &operatorv1alpha1.CertificatePrivateKeyTemplate{Algorithm: "RSA", KeySize: 2048},
					SecretTemplate: &operatorv1alpha1.MetadataTemplate{Labels: map[string]string{"team": "a"}},
				},
			},
		}}
	target, err := TargetOf(kc, rootShard(), nil, frontProxy())
	require.NoError(t, err)
	return Kubeconfig{Kubeconfig: kc, Target: target}
}

func TestBuilders(t *testing.T) {
	for name, k := range map[string]Kubeconfig{"minimal": minimal(t), "loaded": loaded(t)} {
		t.Run(name, func(t *testing.T) {
			secret, err := k.Secret([]byte("CA BUNDLE"), []byte("CERT PEM"), []byte("KEY PEM"))
			require.NoError(t, err)
			// The kubeconfig file itself too, readable rather than base64, and the bindings in kcp.
			objects := []any{k.Certificate(), secret, string(secret.Data[kcp.KubeconfigKey])}
			for _, b := range Bindings(k.Kubeconfig) {
				objects = append(objects, b)
			}
			golden.Assert(t, name, objects...)
		})
	}
}

func TestCertificate(t *testing.T) {
	m := minimal(t).Certificate()
	assert.Equal(t, "kubeconfig-admin", *m.Name)
	assert.Equal(t, "kubeconfig-admin", *m.Spec.SecretName, "cert-manager issues into a Secret of the same name")
	assert.Equal(t, "root-front-proxy-client-ca", *m.Spec.IssuerRef.Name, "user credentials are signed by the front-proxy-client CA")
	assert.Equal(t, "Issuer", *m.Spec.IssuerRef.Kind)
	assert.Equal(t, "admin", *m.Spec.CommonName)
	assert.Nil(t, m.Spec.Subject, "no groups, no organizations")
	assert.Equal(t, 24*time.Hour, m.Spec.Duration.Duration)
	capped := minimal(t)
	capped.Spec.Validity.Duration, capped.MaxValidity = 8766*time.Hour, 720*time.Hour
	assert.Equal(t, 720*time.Hour, capped.Certificate().Spec.Duration.Duration, "issued for the server's maximum")
	capped.MaxValidity = 0
	assert.Equal(t, 8766*time.Hour, capped.Certificate().Spec.Duration.Duration, "no maximum, no bound")
	assert.Nil(t, m.Spec.RenewBefore, "cert-manager's default: the 7-day leaf default would exceed a short validity")
	assert.Equal(t, "admin", m.Spec.SecretTemplate.Labels[pki.OwnerLabel(Kind)], "the issued Secret is found and deleted by the owner label")
	assert.Equal(t, pki.ClientAuth.KeyUsages(), m.Spec.Usages)

	l := loaded(t).Certificate()
	assert.Equal(t, []string{"team-a:developers", "ci", "kubeconfig:team-a:ci"}, l.Spec.Subject.Organizations,
		"spec.authorization adds the group its bindings name")
	assert.Equal(t, 30*24*time.Hour, l.Spec.Duration.Duration, "spec.validity wins over the template's duration")
	assert.Equal(t, 48*time.Hour, l.Spec.RenewBefore.Duration, "the template's renewBefore is kept")
	assert.Equal(t, "ci", l.Labels[pki.OwnerLabel(Kind)], "our labels win over the template's")
	assert.Equal(t, "ci", l.Spec.SecretTemplate.Labels[pki.OwnerLabel(Kind)])
	assert.Equal(t, "a", l.Spec.SecretTemplate.Labels["team"])
	assert.Equal(t, 365*24*time.Hour, loaded(t).Spec.CertificateTemplate.Spec.Duration.Duration, "the spec is not modified")
}

func TestSecretLoadsWithClientcmd(t *testing.T) {
	rs, s, fp := rootShard(), shard(), frontProxy()
	// kcp-operator's deprecated spec.externalHostname is the front proxy's hostname too.
	oldFP := frontProxy()
	oldFP.Spec.External = &operatorv1alpha1.FrontProxyExternalConfig{Port: 8443}
	oldFP.Spec.ExternalHostname = "old.example.com"
	for _, tc := range []struct {
		name      string
		target    credentials.Target
		workspace string
		server    string
		contexts  []string
	}{
		{name: "root shard", target: credentials.ForRootShard(rs), server: "https://root-kcp.team-a.svc.cluster.local:6443",
			contexts: []string{"base", "default", "shard-base"}},
		{name: "shard", target: credentials.ForShard(s, rs), workspace: "root:team-a", server: "https://beta-shard-kcp.team-a.svc.cluster.local:6443",
			contexts: []string{"base", "default", "shard-base"}},
		{name: "front proxy", target: credentials.ForFrontProxy(fp, rs), server: "https://edge.example.com:8443",
			contexts: []string{"base", "default"}},
		{name: "front proxy with the deprecated externalHostname", target: credentials.ForFrontProxy(oldFP, rs), server: "https://old.example.com:8443",
			contexts: []string{"base", "default"}},
		// kcp serves a logical cluster by name at /clusters/<name>, as it serves a path.
		{name: "logical cluster name", target: credentials.ForFrontProxy(fp, rs), workspace: "2x8k4qzl9j1mvh5c", server: "https://edge.example.com:8443",
			contexts: []string{"base", "default"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := minimal(t)
			k.Spec.TargetWorkspace = tc.workspace
			k.Target = tc.target
			secret, err := k.Secret([]byte("CA"), []byte("CERT"), []byte("KEY"))
			require.NoError(t, err)
			assert.Equal(t, "admin-kubeconfig", *secret.Name)
			assert.Equal(t, corev1.SecretTypeOpaque, *secret.Type)
			assert.Equal(t, pki.Labels(Kind, "admin", SecretComponent), secret.Labels)
			require.Len(t, secret.Data, 1, "the kubeconfig only, under the key kubeconfig")

			cfg, err := clientcmd.Load(secret.Data[kcp.KubeconfigKey])
			require.NoError(t, err)
			var contexts []string
			for name := range cfg.Contexts {
				contexts = append(contexts, name)
			}
			assert.ElementsMatch(t, tc.contexts, contexts)
			assert.Equal(t, "default", cfg.CurrentContext)
			workspace := tc.workspace
			if workspace == "" {
				workspace = "root"
			}
			rest, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
			require.NoError(t, err)
			assert.Equal(t, tc.server+"/clusters/"+workspace, rest.Host)
			assert.Equal(t, []byte("CA"), rest.CAData)
			assert.Equal(t, []byte("CERT"), rest.CertData, "the certificate is embedded as data")
			assert.Equal(t, []byte("KEY"), rest.KeyData, "the key is embedded as data")
			base, err := clientcmd.NewNonInteractiveClientConfig(*cfg, "base", nil, nil).ClientConfig()
			require.NoError(t, err)
			assert.Equal(t, tc.server, base.Host)
		})
	}
}

func TestTargetOf(t *testing.T) {
	rs, s, fp := rootShard(), shard(), frontProxy()
	kc := func(target operatorv1alpha1.KubeconfigTarget) *operatorv1alpha1.Kubeconfig {
		return &operatorv1alpha1.Kubeconfig{ObjectMeta: metav1.ObjectMeta{Name: "kc", Namespace: "team-a"},
			Spec: operatorv1alpha1.KubeconfigSpec{Target: target}}
	}
	ref := &corev1.LocalObjectReference{Name: "x"}
	for _, tc := range []struct {
		name   string
		kc     *operatorv1alpha1.Kubeconfig
		rs     *operatorv1alpha1.RootShard
		s      *operatorv1alpha1.Shard
		fp     *operatorv1alpha1.FrontProxy
		want   string
		errors bool
	}{
		{name: "root shard", kc: kc(operatorv1alpha1.KubeconfigTarget{RootShardRef: ref}), rs: rs, want: "RootShard/root"},
		{name: "shard", kc: kc(operatorv1alpha1.KubeconfigTarget{ShardRef: ref}), rs: rs, s: s, want: "Shard/beta"},
		{name: "front proxy", kc: kc(operatorv1alpha1.KubeconfigTarget{FrontProxyRef: ref}), rs: rs, fp: fp, want: "FrontProxy/edge"},
		// The RootShard joined from the Secret signs; the target is named after the Secret.
		{name: "kubeconfig-issuer Secret", kc: kc(operatorv1alpha1.KubeconfigTarget{RootShardSecretRef: ref}), rs: rs, want: "Secret/x"},
		{name: "no target", kc: kc(operatorv1alpha1.KubeconfigTarget{}), rs: rs, errors: true},
		{name: "no root shard", kc: kc(operatorv1alpha1.KubeconfigTarget{RootShardRef: ref}), errors: true},
		{name: "no shard", kc: kc(operatorv1alpha1.KubeconfigTarget{ShardRef: ref}), rs: rs, fp: fp, errors: true},
		{name: "no front proxy", kc: kc(operatorv1alpha1.KubeconfigTarget{FrontProxyRef: ref}), rs: rs, s: s, errors: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := TargetOf(tc.kc, tc.rs, tc.s, tc.fp)
			if tc.errors {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.String())
			assert.Equal(t, "root-front-proxy-client-ca", got.SignerIssuer())
			assert.Equal(t, "root-merged-ca-bundle", got.CABundleSecret())
		})
	}
}

func TestTheTemplateAddsNoGroups(t *testing.T) {
	k := minimal(t)
	k.Spec.Groups = []string{"team-a"}
	k.Spec.CertificateTemplate = &operatorv1alpha1.CertificateTemplate{Spec: &operatorv1alpha1.CertificateSpecTemplate{
		Subject: &operatorv1alpha1.X509Subject{Organizations: []string{"system:masters"}, OrganizationalUnits: []string{"platform"}}}}
	cert := k.Certificate()
	assert.Equal(t, []string{"team-a"}, cert.Spec.Subject.Organizations, "the groups are spec.groups alone, which the API server checks")
	assert.Equal(t, []string{"platform"}, cert.Spec.Subject.OrganizationalUnits, "the rest of the subject is kept")
	assert.Equal(t, []string{"system:masters"}, k.Spec.CertificateTemplate.Spec.Subject.Organizations, "the spec is not modified")
}

func TestOwnsSecret(t *testing.T) {
	k := minimal(t)
	assert.True(t, k.OwnsSecret(pki.Labels(Kind, "admin", SecretComponent)))
	assert.False(t, k.OwnsSecret(pki.Labels(Kind, "admin", CertificateComponent)), "cert-manager's Secret is not the kubeconfig Secret")
	assert.False(t, k.OwnsSecret(pki.Labels(Kind, "other", SecretComponent)), "another Kubeconfig's")
	assert.False(t, k.OwnsSecret(pki.Labels("rootshard", "root", "merged-ca-bundle")), "a RootShard's")
	assert.False(t, k.OwnsSecret(nil), "the user's own")
}
