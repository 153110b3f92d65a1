package framework

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"
)

// VirtualWorkspaceStandIn stands in for a virtual workspace server, run from its realized
// Deployment's command line and mounted files (PodFiles): it serves with the certificate of
// --tls-cert-file and believes the caller's identity in the headers of
// --requestheader-username-headers and --requestheader-group-headers only from a client
// certificate of --requestheader-client-ca-file whose common name is one of
// --requestheader-allowed-names, as kcp's and any aggregated apiserver's request-header
// authentication does. It answers every request with the identity it believed
// (VirtualWorkspaceCaller), or 401 when the client is not a trusted proxy.
type VirtualWorkspaceStandIn struct {
	// Addr is its host:port on loopback.
	Addr   string
	server *http.Server
}

// VirtualWorkspaceCaller is what the stand-in answers: the path asked for and the caller's
// user and groups, as the trusted proxy asserted them.
type VirtualWorkspaceCaller struct {
	Path   string   `json:"path"`
	User   string   `json:"user"`
	Groups []string `json:"groups"`
}

// StartVirtualWorkspaceStandIn starts a stand-in on a free loopback port from a server's
// command line (args) and the files its volumes mount (files, by path); Stop stops it.
func StartVirtualWorkspaceStandIn(args []string, files map[string][]byte) (*VirtualWorkspaceStandIn, error) {
	o := FrontProxyDoubleOptions{Args: args, Files: files}
	flags := commandLineFlags(args)
	serving, err := o.pair(flags["--tls-cert-file"], flags["--tls-private-key-file"])
	if err != nil {
		return nil, fmt.Errorf("the serving certificate: %w", err)
	}
	ca, err := o.fileAt(flags["--requestheader-client-ca-file"])
	if err != nil {
		return nil, fmt.Errorf("--requestheader-client-ca-file: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return nil, errors.New("--requestheader-client-ca-file has no certificate")
	}
	allowed := strings.Split(flags["--requestheader-allowed-names"], ",")
	userHeader, groupHeader := flags["--requestheader-username-headers"], flags["--requestheader-group-headers"]
	if userHeader == "" || groupHeader == "" {
		return nil, errors.New("the command line names no request-header username or group header")
	}
	trusted := func(req *http.Request) bool {
		if req.TLS == nil || len(req.TLS.PeerCertificates) == 0 {
			return false
		}
		intermediates := x509.NewCertPool()
		for _, c := range req.TLS.PeerCertificates[1:] {
			intermediates.AddCert(c)
		}
		leaf := req.TLS.PeerCertificates[0]
		_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		return err == nil && slices.Contains(allowed, leaf.Subject.CommonName)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !trusted(req) {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(VirtualWorkspaceCaller{Path: req.URL.Path, User: req.Header.Get(userHeader), Groups: req.Header.Values(groupHeader)})
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &VirtualWorkspaceStandIn{Addr: l.Addr().String(), server: &http.Server{Handler: handler, ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:  log.New(io.Discard, "", 0),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{serving}, ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12}}}
	go func() { _ = s.server.ServeTLS(l, "", "") }()
	return s, nil
}

// Stop stops the stand-in.
func (s *VirtualWorkspaceStandIn) Stop() { _ = s.server.Close() }
