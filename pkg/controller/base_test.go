package controller

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// plain is a kind's controller with a reconcile and watches only.
type plain struct {
	Base[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus]
	reconciled int
}

func (p *plain) Reconcile(context.Context, *operatorv1alpha1.RootShard, *operatorv1alpha1.RootShardStatus) error {
	p.reconciled++
	return nil
}

func (p *plain) Watches() Watches { return Watches{} }

// hooked is one that releases what its objects made in kcp and owns a managed etcd.
type hooked struct {
	plain
	released int
	listener string
}

func (h *hooked) Release(context.Context, *operatorv1alpha1.RootShard, *operatorv1alpha1.RootShardStatus) error {
	h.released++
	return nil
}

func (h *hooked) EtcdClaims(rs *operatorv1alpha1.RootShard) []string {
	return []string{rs.Name + "-etcd"}
}

func (h *hooked) Configure(deps Deps) { h.listener = deps.LinkListenerURL }

// TestBuildFindsTheControllersHooks: Build gives the lifecycle the controller's Reconcile, and
// its Release and EtcdClaims when it has them, its deps to Configure, and nothing in their place when it has not.
func TestBuildFindsTheControllersHooks(t *testing.T) {
	kind := rootShards("buildtest")
	p := Build[plain](kind, Deps{})
	assert.Nil(t, p.release)
	assert.Nil(t, p.etcdClaims)
	assert.NoError(t, p.reconcile(t.Context(), nil, nil))
	assert.Equal(t, 1, p.reconciled)
	assert.Equal(t, "buildtest", p.Name)
	assert.NotNil(t, p.cleanup, "the namespace's bootstrap PKI is released by every kind")

	h := Build[hooked](kind, Deps{LinkListenerURL: "https://links.example.com:6443"})
	assert.Equal(t, "https://links.example.com:6443", h.listener, "a Configured controller reads its deps")
	if assert.NotNil(t, h.release) && assert.NotNil(t, h.etcdClaims) {
		assert.NoError(t, h.release(t.Context(), nil, nil))
		assert.Equal(t, 1, h.released)
		rs := &operatorv1alpha1.RootShard{}
		rs.Name = "root"
		assert.Equal(t, []string{"root-etcd"}, h.etcdClaims(rs))
	}
}
