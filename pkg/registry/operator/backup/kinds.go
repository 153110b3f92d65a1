package backup

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// Access reaches the managed etcd of one kind's objects.
type Access struct {
	// Kind is the parent kind, for the 422 at its fields.
	Kind schema.GroupKind
	// Etcd points into an object's spec.etcd and status.etcd; false for an object of
	// another kind.
	Etcd func(runtime.Object) (Target, bool)
	// Base is the prefix of the names of the managed etcd of the object name, and of its
	// snapshots', as the builders derive it.
	Base func(name string) string
}

// Target is an object's managed etcd, as the subresource reads and writes it.
type Target struct {
	Meta   metav1.Object
	Spec   *operator.EtcdConfig
	Status **operator.ManagedEtcdStatus
}

// RootShards reaches the managed etcd of RootShards: its snapshots are <rs>-<time>.
var RootShards = Access{
	Kind: operator.Kind("RootShard"),
	Etcd: func(obj runtime.Object) (Target, bool) {
		rs, ok := obj.(*operator.RootShard)
		if !ok {
			return Target{}, false
		}
		return Target{Meta: rs, Spec: &rs.Spec.Etcd, Status: &rs.Status.Etcd}, true
	},
	Base: rootshard.EtcdBase,
}

// Shards reaches the managed etcd of Shards: its snapshots are <s>-shard-<time>.
var Shards = Access{
	Kind: operator.Kind("Shard"),
	Etcd: func(obj runtime.Object) (Target, bool) {
		s, ok := obj.(*operator.Shard)
		if !ok {
			return Target{}, false
		}
		return Target{Meta: s, Spec: &s.Spec.Etcd, Status: &s.Status.Etcd}, true
	},
	Base: shard.EtcdBase,
}
