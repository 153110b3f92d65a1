package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/etcdbackup"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup/agent"
)

// The keys of the S3 credentials Secret, as spec.etcd.managed.backup.store.s3 documents them.
const (
	s3AccessKeyIDKey     = "accessKeyID"
	s3SecretAccessKeyKey = "secretAccessKey"
)

// agentTLS is the agent's and the restore's certificate and the CA they trust: the etcd
// client CA alone, which issued the members' serving certificates and every client's.
type agentTLS struct {
	certFile, keyFile, trustedCAFile string
}

func (t *agentTLS) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&t.certFile, "cert-file", "", "The certificate it serves and presents (PEM).")
	fs.StringVar(&t.keyFile, "key-file", "", "The certificate's key (PEM).")
	fs.StringVar(&t.trustedCAFile, "trusted-ca-file", "", "The CA that every peer's certificate must chain to (PEM): the RootShard's etcd client CA alone.")
}

// load answers the certificate and the trusted pool.
func (t *agentTLS) load() (tls.Certificate, *x509.CertPool, error) {
	if t.certFile == "" || t.keyFile == "" || t.trustedCAFile == "" {
		return tls.Certificate{}, nil, errors.New("--cert-file, --key-file and --trusted-ca-file are required")
	}
	cert, err := tls.LoadX509KeyPair(t.certFile, t.keyFile)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pem, err := os.ReadFile(t.trustedCAFile)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return tls.Certificate{}, nil, fmt.Errorf("%s holds no PEM certificate", t.trustedCAFile)
	}
	return cert, pool, nil
}

// storeFlags say where snapshots are: a directory, or a bucket of S3-compatible storage.
type storeFlags struct {
	dir                                  string
	s3Endpoint, s3Bucket, s3Prefix       string
	s3Region, s3CredentialsDir, s3CAFile string
}

func (s *storeFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&s.dir, "snapshot-dir", "", "Keep snapshots in this directory (the volume store).")
	fs.StringVar(&s.s3Endpoint, "s3-endpoint", "", "Keep snapshots in S3-compatible storage at this https URL.")
	fs.StringVar(&s.s3Bucket, "s3-bucket", "", "The bucket.")
	fs.StringVar(&s.s3Prefix, "s3-prefix", "", "The prefix of every snapshot's key.")
	fs.StringVar(&s.s3Region, "s3-region", "", "The bucket's region.")
	fs.StringVar(&s.s3CredentialsDir, "s3-credentials-dir", "", "A directory with the files "+s3AccessKeyIDKey+" and "+s3SecretAccessKeyKey+" (the Secret, mounted).")
	fs.StringVar(&s.s3CAFile, "s3-ca-file", "", "The CAs the endpoint's certificate chains to (PEM), when the system's do not.")
}

// open answers the store and its kind (volume or s3).
func (s *storeFlags) open() (etcdbackup.Store, error) {
	switch {
	case s.dir != "" && s.s3Endpoint != "":
		return nil, errors.New("--snapshot-dir and --s3-endpoint are mutually exclusive")
	case s.dir != "":
		return etcdbackup.NewDirStore(s.dir)
	case s.s3Endpoint != "":
		cfg := etcdbackup.S3Config{Endpoint: s.s3Endpoint, Bucket: s.s3Bucket, Prefix: s.s3Prefix, Region: s.s3Region}
		for key, into := range map[string]*string{s3AccessKeyIDKey: &cfg.AccessKeyID, s3SecretAccessKeyKey: &cfg.SecretAccessKey} {
			data, err := os.ReadFile(filepath.Join(s.s3CredentialsDir, key))
			if err != nil {
				return nil, fmt.Errorf("the S3 credentials: %w", err)
			}
			*into = strings.TrimSpace(string(data))
		}
		if s.s3CAFile != "" {
			pem, err := os.ReadFile(s.s3CAFile)
			if err != nil {
				return nil, err
			}
			cfg.CABundle = pem
		}
		return etcdbackup.NewS3Store(cfg)
	}
	return nil, errors.New("one of --snapshot-dir and --s3-endpoint is required")
}

// newEtcdAgentCommand is the backup agent of a managed etcd and its members' restore.
func newEtcdAgentCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "etcd-agent",
		Short: "The backup agent of a managed etcd, and its members' restore (docs/etcd.md)",
	}
	cmd.AddCommand(newEtcdAgentServeCommand(), newEtcdAgentRestoreCommand())
	return cmd
}

func newEtcdAgentServeCommand() *cobra.Command {
	var (
		tlsFlags  agentTLS
		store     storeFlags
		endpoints []string
		listen    string
		base      string
		retention int
	)
	cmd := &cobra.Command{
		Use:          "serve",
		Short:        "Take snapshots when asked, keep the newest, and serve them over mutual TLS",
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cert, pool, err := tlsFlags.load()
			if err != nil {
				return err
			}
			st, err := store.open()
			if err != nil {
				return err
			}
			if len(endpoints) == 0 || base == "" || retention < 1 {
				return errors.New("--endpoints, --base and a --retention of at least 1 are required")
			}
			s := &agent.Server{Store: st, Endpoints: endpoints, Base: base, Retention: retention,
				TLS: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}}
			srv := &http.Server{
				Handler:           s.Handler(),
				ReadHeaderTimeout: 10 * time.Second,
				TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool,
					ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12},
				BaseContext: func(net.Listener) context.Context { return cmd.Context() },
			}
			l, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			klog.InfoS("The backup agent serves", "address", l.Addr().String(), "endpoints", endpoints)
			go func() {
				<-cmd.Context().Done()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				_ = srv.Shutdown(ctx)
			}()
			if err := srv.ServeTLS(l, "", ""); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	fs := cmd.Flags()
	tlsFlags.addFlags(fs)
	store.addFlags(fs)
	fs.StringSliceVar(&endpoints, "endpoints", nil, "The members' client URLs.")
	fs.StringVar(&listen, "listen-address", fmt.Sprintf(":%d", agent.Port), "Where to serve.")
	fs.StringVar(&base, "base", "", "The snapshots' name base.")
	fs.IntVar(&retention, "retention", 7, "How many snapshots the store keeps.")
	return cmd
}

func newEtcdAgentRestoreCommand() *cobra.Command {
	var (
		tlsFlags agentTLS
		store    storeFlags
		source   string
		name     string
		cfg      agent.RestoreConfig
	)
	cmd := &cobra.Command{
		Use:          "restore",
		Short:        "Restore a snapshot into a member's empty data directory (a member with data is left alone)",
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" || cfg.DataDir == "" || cfg.Name == "" || cfg.PeerURL == "" || cfg.InitialCluster == "" {
				return errors.New("--snapshot, --data-dir, --name, --initial-advertise-peer-urls and --initial-cluster are required")
			}
			var open func(context.Context) (io.ReadCloser, error)
			switch {
			case source != "" && (store.dir != "" || store.s3Endpoint != ""):
				return errors.New("--source and a store's flags are mutually exclusive")
			case source != "":
				cert, pool, err := tlsFlags.load()
				if err != nil {
					return err
				}
				client := agent.Client{URL: source, HTTP: &http.Client{Transport: &http.Transport{
					TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}}}}
				open = func(ctx context.Context) (io.ReadCloser, error) { return client.Open(ctx, name) }
			default:
				st, err := store.open()
				if err != nil {
					return err
				}
				open = func(ctx context.Context) (io.ReadCloser, error) { return st.Get(ctx, name) }
			}
			restored, err := agent.Restore(cmd.Context(), open, cfg)
			if err != nil {
				return err
			}
			if restored {
				klog.InfoS("Restored the snapshot", "snapshot", name, "member", cfg.Name, "dataDir", cfg.DataDir)
			} else {
				klog.InfoS("The member has data: nothing is restored", "member", cfg.Name, "dataDir", cfg.DataDir)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	tlsFlags.addFlags(fs)
	store.addFlags(fs)
	fs.StringVar(&source, "source", "", "The backup agent to read the snapshot from (https URL).")
	fs.StringVar(&name, "snapshot", "", "The snapshot's name.")
	fs.StringVar(&cfg.DataDir, "data-dir", "", "The member's data directory.")
	fs.StringVar(&cfg.Name, "name", "", "The member's name.")
	fs.StringVar(&cfg.PeerURL, "initial-advertise-peer-urls", "", "The member's peer URL.")
	fs.StringVar(&cfg.InitialCluster, "initial-cluster", "", "Every member's name=peer URL.")
	fs.StringVar(&cfg.InitialClusterToken, "initial-cluster-token", "", "The cluster's token.")
	return cmd
}
