// Package operator is the internal version of the operator.kcp.io API: the form the
// registry validates and stores through conversion. See package v1alpha1 for field docs.
//
// +k8s:deepcopy-gen=package
// +groupName=operator.kcp.io
package operator
