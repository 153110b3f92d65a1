// Package kcpclient is how the server talks to the kcp it realizes: where a kcp server of a
// RootShard or Shard is reached (an Endpoint), how a connection to it is opened (a Dialer),
// and the clients that present the server's own identity there (Clients). No other code
// builds the URLs the server dials.
package kcpclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
)

// Endpoint is a kcp server in the host cluster: its Service and the pods behind it.
type Endpoint struct {
	Namespace string
	// Service is the Service's name.
	Service string
	// Port is the Service's port, which is also the pods' container port.
	Port int32
	// Selector selects the pods behind the Service.
	Selector map[string]string
	// ClusterDomain is the host cluster's DNS domain.
	ClusterDomain string
}

// ServerName is the name the endpoint's serving certificate carries and clients verify:
// the Service's fully qualified DNS name.
func (e Endpoint) ServerName() string {
	domain := e.ClusterDomain
	if domain == "" {
		domain = "cluster.local"
	}
	return fmt.Sprintf("%s.%s.svc.%s", e.Service, e.Namespace, domain)
}

// URL is the base URL of the endpoint: https on its Service's name and port. Whatever the
// dialer, requests carry this host, so TLS verifies the same name.
func (e Endpoint) URL() string {
	return "https://" + net.JoinHostPort(e.ServerName(), strconv.Itoa(int(e.Port)))
}

// String names the endpoint in messages.
func (e Endpoint) String() string { return e.Namespace + "/" + e.Service }

// Dialer opens connections to endpoints. TLS runs over what it returns, end to end between
// the server and kcp, so that kcp sees the server's client certificate.
type Dialer interface {
	// Dial opens a connection to ep.
	Dial(ctx context.Context, ep Endpoint) (net.Conn, error)
}

// The dialers --kcp-dialer chooses from.
const (
	// ServiceDNSDialer dials the Service's cluster DNS name: for a server running in the
	// host cluster.
	ServiceDNSDialer = "service-dns"
	// PortForwardDialer tunnels through the host's kube-apiserver (pods/portforward) to a
	// ready pod of the Service: for a server running outside the host cluster.
	PortForwardDialer = "port-forward"
	// NoDialer reaches nothing: for a host cluster whose pods run no kcp, such as the local
	// stack's kwok node. Every dial fails with ErrNoDialer at once.
	NoDialer = "none"
)

// Dialers are the values --kcp-dialer accepts.
var Dialers = []string{ServiceDNSDialer, PortForwardDialer, NoDialer}

// ErrNoDialer is the error of every dial of NoDialer: what the controllers would learn from
// kcp or a managed etcd is unknown, and what they would clean up there is not waited for.
var ErrNoDialer = errors.New("this server is told that no kcp can be reached from it (--kcp-dialer=none), " +
	"so it does not ask kcp or a managed etcd anything")

// None is NoDialer.
type None struct{}

// Dial implements Dialer: it fails with ErrNoDialer.
func (None) Dial(context.Context, Endpoint) (net.Conn, error) { return nil, ErrNoDialer }

// New returns the dialer that name chooses; host reaches the host cluster's kube-apiserver,
// which the port-forward dialer tunnels through.
func New(name string, host *rest.Config) (Dialer, error) {
	switch name {
	case ServiceDNSDialer, "":
		return ServiceDNS{}, nil
	case PortForwardDialer:
		return NewPortForward(host)
	case NoDialer:
		return None{}, nil
	default:
		return nil, fmt.Errorf("unknown kcp dialer %q: want one of %v", name, Dialers)
	}
}

// dialTimeout bounds opening a connection, so that an unreachable kcp fails a reconcile
// quickly instead of holding a worker.
const dialTimeout = 10 * time.Second

// ServiceDNS dials the endpoint's Service by its cluster DNS name.
type ServiceDNS struct {
	// Resolve, when set, replaces the address dialed: for tests.
	Resolve func(hostport string) string
}

// Dial implements Dialer.
func (d ServiceDNS) Dial(ctx context.Context, ep Endpoint) (net.Conn, error) {
	addr := net.JoinHostPort(ep.ServerName(), strconv.Itoa(int(ep.Port)))
	if d.Resolve != nil {
		addr = d.Resolve(addr)
	}
	dialer := net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	return dialer.DialContext(ctx, "tcp", addr)
}
