package app

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation"
	netutils "k8s.io/utils/net"
)

// linkListenerURL is the URL linked remotes reach the link listener at, from
// --link-bind-address and --link-advertise-url; empty when no listener is served. The bind
// address is a host:port with a port of 1 to 65535; the advertised URL is an https URL with
// a host and nothing but a host, a port and an empty path, and it is required when the bind
// address's host is unspecified (empty, 0.0.0.0 or ::), which names no address a remote
// could dial.
func linkListenerURL(bind, advertise string) (string, error) {
	if bind == "" {
		if advertise != "" {
			return "", errors.New("--link-advertise-url needs --link-bind-address: no link listener is served without it")
		}
		return "", nil
	}
	host, port, err := net.SplitHostPort(bind)
	if err != nil {
		return "", fmt.Errorf("--link-bind-address must be host:port, not %q: %w", bind, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", fmt.Errorf("--link-bind-address must have a port from 1 to 65535, not %q", port)
	}
	ip := netutils.ParseIPSloppy(host)
	if host != "" && ip == nil && len(validation.IsDNS1123Subdomain(host)) > 0 {
		return "", fmt.Errorf("--link-bind-address must have an IP address or a DNS name as its host, not %q", host)
	}
	if advertise == "" {
		if host == "" || ip.IsUnspecified() {
			return "", fmt.Errorf("--link-advertise-url must be set when --link-bind-address (%q) names no host: the remotes need an address to dial", bind)
		}
		return "https://" + net.JoinHostPort(host, port), nil
	}
	u, err := url.Parse(advertise)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.User != nil || (u.Path != "" && u.Path != "/") ||
		u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("--link-advertise-url must be an https URL of a host and an optional port, not %q", advertise)
	}
	return advertise, nil
}
