package framework

import "github.com/kcp-setups/apiserver/internal/localstack"

// EtcdMembers are the members of an etcd StatefulSet run as local processes
// (localstack.EtcdMembers): Stack.RunEtcdMembers runs them, ForwardMembers leads their pods'
// ports to them.
type EtcdMembers = localstack.EtcdMembers

// EtcdMember is one member, as it runs on loopback (localstack.EtcdMember).
type EtcdMember = localstack.EtcdMember
