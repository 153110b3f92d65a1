package framework

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// SNIRouter is one loopback address behind which several kcp stand-ins serve, each under the
// server names of its certificates: it reads the name a TLS client asks for (SNI) from the
// ClientHello, without terminating TLS, and splices the connection to the stand-in routed
// for that name. TLS stays end to end between the client and the stand-in, as it is between
// the server and a kcp pod. The port-forward that kwok gives every pod of a namespace
// (ForwardPodsTo) then reaches the root shard, a shard or the root shard proxy, by the
// Service's name the client dials, as a cluster's Services would.
type SNIRouter struct {
	// Addr is the router's host:port on loopback.
	Addr string

	listener net.Listener
	mu       sync.Mutex
	routes   map[string]string
	conns    map[net.Conn]struct{}
}

// StartSNIRouter listens on a free loopback port. Stop it with Stop.
func StartSNIRouter() (*SNIRouter, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &SNIRouter{Addr: l.Addr().String(), listener: l, routes: map[string]string{}, conns: map[net.Conn]struct{}{}}
	go r.serve()
	return r, nil
}

// Route sends the connections that ask for serverName to addr (host:port).
func (r *SNIRouter) Route(serverName, addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.routes[serverName] = addr
}

// Stop closes the listener and every connection.
func (r *SNIRouter) Stop() {
	_ = r.listener.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for c := range r.conns {
		_ = c.Close()
	}
}

func (r *SNIRouter) serve() {
	for {
		c, err := r.listener.Accept()
		if err != nil {
			return
		}
		go r.handle(c)
	}
}

func (r *SNIRouter) track(c net.Conn, open bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if open {
		r.conns[c] = struct{}{}
	} else {
		delete(r.conns, c)
	}
}

// handle reads the ClientHello, dials the route of its server name and splices both ways. A
// name without a route is closed, as a Service with no endpoint would refuse.
func (r *SNIRouter) handle(c net.Conn) {
	r.track(c, true)
	defer r.track(c, false)
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	name, hello, err := readServerName(c)
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	r.mu.Lock()
	addr, ok := r.routes[name]
	r.mu.Unlock()
	if !ok {
		return
	}
	backend, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return
	}
	r.track(backend, true)
	defer r.track(backend, false)
	defer backend.Close()
	if _, err := backend.Write(hello); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(backend, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, backend); done <- struct{}{} }()
	<-done
}

// errHelloRead ends the handshake once the ClientHello is read.
var errHelloRead = errors.New("client hello read")

// readServerName reads a TLS ClientHello from c and returns the server name it asks for and
// the bytes read, to be replayed to the backend.
func readServerName(c net.Conn) (string, []byte, error) {
	var read bytes.Buffer
	var name string
	err := tls.Server(recordingConn{Conn: c, read: &read}, &tls.Config{
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			name = hello.ServerName
			return nil, errHelloRead
		},
	}).Handshake()
	if !errors.Is(err, errHelloRead) {
		return "", nil, err
	}
	return name, read.Bytes(), nil
}

// recordingConn keeps what is read and writes nothing: the handshake that reads the
// ClientHello must not answer the client.
type recordingConn struct {
	net.Conn
	read *bytes.Buffer
}

func (c recordingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Write(p[:n])
	return n, err
}

func (c recordingConn) Write(p []byte) (int, error) { return len(p), nil }
