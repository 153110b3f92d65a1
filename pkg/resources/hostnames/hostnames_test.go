package hostnames

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

func meta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "team-a"} }

// fieldOf is the field that chose name among names, and whether name is there.
func fieldOf(names []Name, name string) (string, bool) {
	for _, n := range names {
		if n.Name == name {
			return n.Field, true
		}
	}
	return "", false
}

func TestTheSharedBootstrapIsNoOnesName(t *testing.T) {
	rs := RootShard(&operatorv1alpha1.RootShard{ObjectMeta: meta("root")})
	cs := CacheServer(&operatorv1alpha1.CacheServer{ObjectMeta: meta("cache")})
	for _, shared := range Shared {
		assert.NotContains(t, Strings(rs), shared)
		assert.NotContains(t, Strings(cs), shared)
	}
	assert.Contains(t, Strings(rs), "root-ca")
	assert.Contains(t, Strings(cs), "cache-ca")
}

func TestTheFieldThatChoseAName(t *testing.T) {
	kc := &operatorv1alpha1.Kubeconfig{ObjectMeta: meta("ci")}
	kc.Spec.SecretRef.Name = "ci-secret"
	kc.Spec.Target.RootShardSecretRef = &corev1.LocalObjectReference{Name: "root-kubeconfig-issuer"}
	names := Kubeconfig(kc)
	for name, want := range map[string]string{
		"kubeconfig-ci": "",
		"ci-secret":     "spec.secretRef.name",
		"ci-kubeconfig-root-front-proxy-client-ca": "spec.target.rootShardSecretRef",
	} {
		field, ok := fieldOf(names, name)
		assert.True(t, ok, "%s is derived: %v", name, Strings(names))
		assert.Equal(t, want, field, name)
	}

	s := &operatorv1alpha1.Shard{ObjectMeta: meta("s")}
	s.Spec.RootShard.SecretRef = &corev1.LocalObjectReference{Name: "root-shard-join"}
	field, ok := fieldOf(Shard(s), "s-shard-root-server-ca")
	assert.True(t, ok)
	assert.Equal(t, "spec.rootShard.secretRef", field)
	field, ok = fieldOf(Shard(s), "s-server")
	assert.True(t, ok)
	assert.Empty(t, field, "its own name chose it")
}

func TestAShardOfAReferenceDerivesNoCopies(t *testing.T) {
	s := &operatorv1alpha1.Shard{ObjectMeta: meta("s")}
	s.Spec.RootShard.Reference = &corev1.LocalObjectReference{Name: "root"}
	for _, n := range Strings(Shard(s)) {
		assert.NotContains(t, n, "s-shard-root", "only a joined Shard writes copies of CAs")
		assert.NotContains(t, []string{"root-ca", "root-server-ca", "root-merged-ca-bundle"}, n, "the RootShard's names are its own")
	}
}

func TestOfKnowsEveryKind(t *testing.T) {
	for _, o := range []runtime.Object{
		&operatorv1alpha1.RootShard{ObjectMeta: meta("a")}, &operatorv1alpha1.Shard{ObjectMeta: meta("a")},
		&operatorv1alpha1.FrontProxy{ObjectMeta: meta("a")}, &operatorv1alpha1.CacheServer{ObjectMeta: meta("a")},
		&operatorv1alpha1.VirtualWorkspace{ObjectMeta: meta("a")}, &operatorv1alpha1.Kubeconfig{ObjectMeta: meta("a")},
		&operatorv1alpha1.Link{ObjectMeta: meta("a")},
	} {
		names, ok := Of(o)
		assert.True(t, ok)
		assert.NotEmpty(t, names)
	}
	_, ok := Of(&corev1.Secret{})
	assert.False(t, ok)
}

// TestEverySlotNameIsDerived: the second slot and the trust bundle of every CA a RootShard or
// CacheServer can rotate, and of every signing leaf, are derived before any rotation, so
// that no Kubeconfig's secretRef or other object takes one first.
func TestEverySlotNameIsDerived(t *testing.T) {
	rs := Strings(RootShard(&operatorv1alpha1.RootShard{ObjectMeta: meta("r2")}))
	s := &operatorv1alpha1.Shard{ObjectMeta: meta("s")}
	s.Spec.RootShard.Reference = &corev1.LocalObjectReference{Name: "r2"}
	shard := Strings(Shard(s))
	cs := Strings(CacheServer(&operatorv1alpha1.CacheServer{ObjectMeta: meta("cache")}))
	for _, row := range []struct {
		names []string
		slot  string
	}{
		{rs, "r2-ca-next"},
		{rs, "r2-ca-trust"},
		{rs, "r2-server-ca-next"},
		{rs, "r2-client-ca-trust"},
		{rs, "r2-front-proxy-client-ca-next"},
		{rs, "r2-front-proxy-client-ca-trust"},
		{rs, "r2-requestheader-client-ca-next"},
		{rs, "r2-service-account-ca-trust"},
		{rs, "r2-etcd-client-ca-next"},
		{rs, "r2-etcd-peer-ca-trust"},
		{rs, "r2-service-account-next"},
		{rs, "r2-service-account-trust"},
		{shard, "s-service-account-next"},
		{shard, "s-service-account-trust"},
		{cs, "cache-ca-next"},
		{cs, "cache-ca-trust"},
	} {
		assert.Contains(t, row.names, row.slot)
	}
}

// TestALinkDerivesItsBootstrapSecret: the Secret carried to a Link's remote is claimed in
// the namespace, as <link>-link-bootstrap, and so is its client certificate.
func TestALinkDerivesItsBootstrapSecret(t *testing.T) {
	assert.Equal(t, []string{"eu-1-link-bootstrap", "eu-1-link-client"}, Strings(Link(&operatorv1alpha1.Link{ObjectMeta: meta("eu-1")})))
}

// TestARootShardDerivesItsLinkPKI: a RootShard claims its link CA (both slots and the trust
// bundle) and the listener's serving certificate before any Link names it, so that a Link
// appearing never finds them taken.
func TestARootShardDerivesItsLinkPKI(t *testing.T) {
	names := Strings(RootShard(&operatorv1alpha1.RootShard{ObjectMeta: meta("root")}))
	for _, name := range []string{"root-link-ca", "root-link-ca-next", "root-link-ca-trust", "root-link-server"} {
		assert.Contains(t, names, name)
	}
}
