package integration

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
)

// TestDerivedNamesCannotCollide creates pairs of objects through the clientset, each pair in
// a namespace of its own: when the second would derive a host name the first derives, it is
// refused with a 422 naming the first and the name, and nothing is stored; near names are
// both stored.
func TestDerivedNamesCannotCollide(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	defer s.stop()
	ctx := t.Context()
	type create func(ctx context.Context, c clientset.Interface, ns string) error
	rootShard := func(name string) create {
		return func(ctx context.Context, c clientset.Interface, ns string) error {
			o := newRootShard(name)
			o.Namespace = ns
			_, err := c.OperatorV1alpha1().RootShards(ns).Create(ctx, o, metav1.CreateOptions{})
			return err
		}
	}
	shard := func(name string, joined bool) create {
		return func(ctx context.Context, c clientset.Interface, ns string) error {
			o := newShard(name, "root")
			o.Namespace = ns
			if joined {
				o.Spec.RootShard = operatorv1alpha1.RootShardConfig{SecretRef: &corev1.LocalObjectReference{Name: "root-shard-join"}}
			}
			_, err := c.OperatorV1alpha1().Shards(ns).Create(ctx, o, metav1.CreateOptions{})
			return err
		}
	}
	cacheServer := func(name string) create {
		return func(ctx context.Context, c clientset.Interface, ns string) error {
			o := newCacheServer(name)
			o.Namespace = ns
			_, err := c.OperatorV1alpha1().CacheServers(ns).Create(ctx, o, metav1.CreateOptions{})
			return err
		}
	}
	kubeconfig := func(name, secret string) create {
		return func(ctx context.Context, c clientset.Interface, ns string) error {
			o := newKubeconfig(name, "edge")
			o.Namespace = ns
			o.Spec.SecretRef.Name = secret
			_, err := c.OperatorV1alpha1().Kubeconfigs(ns).Create(ctx, o, metav1.CreateOptions{})
			return err
		}
	}
	link := func(name string) create {
		return func(ctx context.Context, c clientset.Interface, ns string) error {
			o := newLink(name, "root", name+".links.example.com")
			o.Namespace = ns
			_, err := c.OperatorV1alpha1().Links(ns).Create(ctx, o, metav1.CreateOptions{})
			return err
		}
	}

	for i, tc := range []struct {
		name          string
		first, second create
		// field is where the 422 points, want what its message says; empty, both are stored.
		field string
		want  []string
	}{
		{"Shard next to the RootShard of its name", rootShard("alpha"), shard("alpha", false), "metadata.name",
			[]string{"RootShard/alpha", `"alpha-`}},
		{"RootShard next to the Shard of its name", shard("alpha", false), rootShard("alpha"), "metadata.name",
			[]string{"Shard/alpha", `"alpha-`}},
		{"CacheServer next to the RootShard of its name", rootShard("alpha"), cacheServer("alpha"), "metadata.name",
			[]string{"RootShard/alpha", `"alpha-ca"`}},
		{"Kubeconfig ca next to RootShard kubeconfig", rootShard("kubeconfig"), kubeconfig("ca", "ca-kubeconfig"), "metadata.name",
			[]string{"RootShard/kubeconfig", `"kubeconfig-ca"`}},
		{"RootShard x-etcd next to RootShard x", rootShard("x"), rootShard("x-etcd"), "metadata.name",
			[]string{"RootShard/x", `"x-etcd-client-ca"`}},
		{"joined Shard next to its RootShard name", rootShard("y-shard-root"), shard("y", true), "spec.rootShard.secretRef",
			[]string{"RootShard/y-shard-root", `"y-shard-root-`}},
		{"joined Shard, then the RootShard of its shard-root name", shard("joined", true), rootShard("joined-shard-root"), "metadata.name",
			[]string{"Shard/joined", `"joined-shard-root-`}},
		{"Kubeconfig into a join Secret", rootShard("root"), kubeconfig("admin", "root-shard-join"), "spec.secretRef.name",
			[]string{"RootShard/root", `"root-shard-join"`}},
		{"RootShard whose join Secret a Kubeconfig writes", kubeconfig("admin", "root-shard-join"), rootShard("root"), "metadata.name",
			[]string{"Kubeconfig/admin", `"root-shard-join"`}},
		{"RootShard kcp-pki next to the bootstrap PKI of the namespace", rootShard("root"), rootShard("kcp-pki"), "metadata.name",
			[]string{"reserved", "kcp-pki-ca"}},
		{"a Shard named as kcp registers the root shard", nil, shard("root", false), "metadata.name",
			[]string{"reserved", "kcp registers the root shard"}},
		{"Kubeconfig into a Link's bootstrap Secret", link("eu-1"), kubeconfig("admin", "eu-1-link-bootstrap"), "spec.secretRef.name",
			[]string{"Link/eu-1", `"eu-1-link-bootstrap"`}},
		{"Link whose bootstrap Secret a Kubeconfig writes", kubeconfig("admin", "eu-1-link-bootstrap"), link("eu-1"), "metadata.name",
			[]string{"Kubeconfig/admin", `"eu-1-link-bootstrap"`}},
		{"alpha and alphabet", rootShard("alpha"), rootShard("alphabet"), "", nil},
		{"x and xetcd", rootShard("x"), rootShard("xetcd"), "", nil},
		{"Shard alpha next to CacheServer alphabet", cacheServer("alphabet"), shard("alpha", false), "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := namespace + "-" + string(rune('a'+i))
			if tc.first != nil {
				require.NoError(t, tc.first(ctx, s.client, ns))
			}
			before := storedNamesIn(t, s.client, ns)
			err := tc.second(ctx, s.client, ns)
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			assertInvalid(t, err, tc.field)
			msg := err.(apierrors.APIStatus).Status().Details.Causes[0].Message
			for _, w := range tc.want {
				assert.Contains(t, msg, w)
			}
			assert.Equal(t, before, storedNamesIn(t, s.client, ns), "nothing refused is stored")
		})
	}

	t.Run("an update that moves a Kubeconfig into a join Secret", func(t *testing.T) {
		ns := namespace + "-update"
		require.NoError(t, rootShard("root")(ctx, s.client, ns))
		require.NoError(t, kubeconfig("admin", "admin-kubeconfig")(ctx, s.client, ns))
		kcs := s.client.OperatorV1alpha1().Kubeconfigs(ns)
		kc, err := kcs.Get(ctx, "admin", metav1.GetOptions{})
		require.NoError(t, err)
		kc.Spec.SecretRef.Name = "root-shard-join"
		_, err = kcs.Update(ctx, kc, metav1.UpdateOptions{})
		assertInvalid(t, err, "spec.secretRef.name")
		assert.Contains(t, err.Error(), "RootShard/root")

		kc.Spec.SecretRef.Name = "admin-kubeconfig"
		kc.Labels["edited"] = "yes"
		_, err = kcs.Update(ctx, kc, metav1.UpdateOptions{})
		require.NoError(t, err, "an edit that derives no new name passes")
	})
}
