package framework

import "github.com/kcp-setups/apiserver/internal/localstack"

// EtcdMembers are the members of an etcd StatefulSet run as local processes
// (localstack.EtcdMembers): Stack.RunEtcdMembers runs them, ForwardMembers leads their pods'
// ports to them.
type EtcdMembers = localstack.EtcdMembers

// EtcdMember is one member, as it runs on loopback (localstack.EtcdMember).
type EtcdMember = localstack.EtcdMember

// EtcdFixture is a managed etcd built by hand after the design (localstack.EtcdFixture).
type EtcdFixture = localstack.EtcdFixture

// NewEtcdFixture builds the managed etcd of base in namespace (localstack.NewEtcdFixture).
func NewEtcdFixture(dir, namespace, base string, replicas int32) (*EtcdFixture, error) {
	return localstack.NewEtcdFixture(dir, namespace, base, replicas)
}
