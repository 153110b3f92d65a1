package v1alpha1

import (
	"net"
	"strconv"
)

// SplitExternalHostname reads kcp-operator's deprecated FrontProxy externalHostname, which
// may carry a port ("kcp.example.com:8443", as kcp-operator parses it): the host, and the
// port or 0 when it names none. Validation has refused a port that is not one.
func SplitExternalHostname(value string) (host string, port int32) {
	h, p, err := net.SplitHostPort(value)
	if err != nil {
		return value, 0
	}
	n, err := strconv.ParseInt(p, 10, 32)
	if err != nil {
		return h, 0
	}
	return h, int32(n)
}
