// Package validation checks the internal operator.kcp.io objects before they are stored.
//
// Every function returns every fault it finds, one field error per fault, with the field
// path a user wrote (the JSON names of v1alpha1), so that a rejected manifest can be fixed
// in one round trip. Defaulting has run before validation, so defaulted fields (the cluster
// domain, the external port, the issuer kind and group, a Kubeconfig's targetWorkspace, a
// request's expirationSeconds) must hold a real value here.
package validation
