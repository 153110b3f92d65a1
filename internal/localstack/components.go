package localstack

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagev1ac "k8s.io/client-go/applyconfigurations/storage/v1"
	"k8s.io/client-go/util/keyutil"
)

// The names the kcp-setups server is registered under.
const (
	ServerNamespace = "kcp-setups"
	// ServerService is not the install manifests' Service name, so that they can be applied
	// (with --dry-run=server) on the stack without colliding with its loopback registration.
	ServerService = "kcp-setups-loopback"
)

// pki is the stack's certificates.
type pki struct {
	dir                  string
	cluster, frontProxy  *CA
	server               *CA
	kubeAPIServer, proxy *KeyPair
	admin, kcpSetups     *KeyPair
	serviceAccountKey    string
}

// createPKI creates (or reuses) the CAs and issues fresh leaf certificates.
func (s *Stack) createPKI(context.Context) error {
	p := &pki{dir: s.Path("pki")}
	var err error
	if p.cluster, err = LoadOrCreateCA(p.dir, "cluster-ca"); err != nil {
		return err
	}
	if p.frontProxy, err = LoadOrCreateCA(p.dir, "front-proxy-ca"); err != nil {
		return err
	}
	if p.server, err = LoadOrCreateCA(p.dir, "kcp-setups-ca"); err != nil {
		return err
	}
	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	if p.kubeAPIServer, err = p.cluster.Issue(p.dir, "kube-apiserver", CertSpec{
		CommonName: "kube-apiserver",
		DNSNames:   []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPs:        append(loopback, net.ParseIP("10.96.0.1")),
		Usages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}); err != nil {
		return err
	}
	// kube-apiserver verifies the aggregated server as <service>.<namespace>.svc.
	if p.kcpSetups, err = p.server.Issue(p.dir, "kcp-setups-apiserver", CertSpec{
		CommonName: ServerService,
		DNSNames:   []string{ServerService + "." + ServerNamespace + ".svc", "localhost"},
		IPs:        loopback,
		Usages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}); err != nil {
		return err
	}
	if p.proxy, err = p.frontProxy.ClientCert(p.dir, "front-proxy-client", "front-proxy-client"); err != nil {
		return err
	}
	if p.admin, err = p.cluster.ClientCert(p.dir, "admin", "admin", "system:masters"); err != nil {
		return err
	}
	// kube-apiserver reads the public key out of the private key file.
	p.serviceAccountKey = p.dir + "/service-account.key"
	if _, err := os.Stat(p.serviceAccountKey); err != nil {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
		if err != nil {
			return err
		}
		if err := WriteFiles(map[string][]byte{p.serviceAccountKey: keyPEM}); err != nil {
			return err
		}
	}
	s.pki = p
	return nil
}

func (s *Stack) startEtcd(ctx context.Context) error {
	clientPort, err := FreePort()
	if err != nil {
		return err
	}
	peerPort, err := FreePort()
	if err != nil {
		return err
	}
	s.EtcdURL = "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	p, err := s.start("etcd",
		"--name=default", "--data-dir="+s.Path("etcd"),
		"--listen-client-urls="+s.EtcdURL, "--advertise-client-urls="+s.EtcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL,
		"--unsafe-no-fsync=true", "--log-level=warn",
	)
	if err != nil {
		return err
	}
	return Poll(ctx, "etcd to serve", time.Minute, []*Process{p}, func(ctx context.Context) (bool, error) {
		return HTTPOK(ctx, http.DefaultClient, s.EtcdURL+"/health")
	})
}

func (s *Stack) startKubeAPIServer(ctx context.Context) error {
	port, err := FreePort()
	if err != nil {
		return err
	}
	p, err := s.start("kube-apiserver",
		"--etcd-servers="+s.EtcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		// kube-apiserver refuses to advertise a loopback address as its endpoint otherwise.
		"--endpoint-reconciler-type=none",
		"--cert-dir="+s.Path("pki", "kube-apiserver-generated"),
		"--tls-cert-file="+s.pki.kubeAPIServer.CertFile, "--tls-private-key-file="+s.pki.kubeAPIServer.KeyFile,
		"--client-ca-file="+s.pki.cluster.CertFile,
		"--service-account-key-file="+s.pki.serviceAccountKey,
		"--service-account-signing-key-file="+s.pki.serviceAccountKey,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=Node,RBAC",
		"--allow-privileged=true",
		// kwok's node answers port-forwards on its InternalIP (loopback); its Hostname
		// resolves nowhere.
		"--kubelet-preferred-address-types=InternalIP",
		// The aggregation layer: kube-apiserver proxies to kcp-setups as front-proxy-client
		// and passes the user in X-Remote-* headers.
		"--requestheader-client-ca-file="+s.pki.frontProxy.CertFile,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file="+s.pki.proxy.CertFile, "--proxy-client-key-file="+s.pki.proxy.KeyFile,
	)
	if err != nil {
		return err
	}
	server := "https://127.0.0.1:" + strconv.Itoa(port)
	s.AdminKubeconfig = s.Path("kubeconfig")
	if err := WriteKubeconfig(s.AdminKubeconfig, server, s.pki.cluster.CertPEM, s.pki.admin); err != nil {
		return err
	}
	if err := s.adminClients(); err != nil {
		return err
	}
	return s.waitForKubeAPIServer(ctx, p)
}

func (s *Stack) startControllers(ctx context.Context) error {
	if err := s.applyStorageClass(ctx); err != nil {
		return err
	}
	cmPort, err := FreePort()
	if err != nil {
		return err
	}
	if _, err := s.start("kube-controller-manager",
		"--kubeconfig="+s.AdminKubeconfig,
		"--authentication-kubeconfig="+s.AdminKubeconfig, "--authorization-kubeconfig="+s.AdminKubeconfig,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(cmPort),
		"--service-account-private-key-file="+s.pki.serviceAccountKey,
		"--root-ca-file="+s.pki.cluster.CertFile,
		"--leader-elect=false",
		// Volumes for claims without one, such as a managed etcd's, as a cloud's default
		// StorageClass gives them: directories under /tmp/hostpath_pv/ (see storageClass).
		"--enable-hostpath-provisioner",
	); err != nil {
		return err
	}
	schedPort, err := FreePort()
	if err != nil {
		return err
	}
	_, err = s.start("kube-scheduler",
		"--kubeconfig="+s.AdminKubeconfig,
		"--authentication-kubeconfig="+s.AdminKubeconfig, "--authorization-kubeconfig="+s.AdminKubeconfig,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(schedPort),
		"--leader-elect=false",
	)
	return err
}

// StorageClass is the stack's default StorageClass: kube-controller-manager's hostPath
// provisioner, so that a claim without a volume (a managed etcd member's) gets one, and its
// volume goes with the claim.
const StorageClass = "local-hostpath"

// applyStorageClass makes StorageClass the cluster's default.
func (s *Stack) applyStorageClass(ctx context.Context) error {
	class := storagev1ac.StorageClass(StorageClass).
		WithAnnotations(map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}).
		WithProvisioner("kubernetes.io/host-path").
		WithReclaimPolicy(corev1.PersistentVolumeReclaimDelete).
		WithVolumeBindingMode(storagev1.VolumeBindingImmediate)
	if _, err := s.Kube.StorageV1().StorageClasses().Apply(ctx, class, ApplyOptions); err != nil {
		return fmt.Errorf("applying the default StorageClass: %w", err)
	}
	return nil
}

// httpOK reports whether GET url answers 200.
func HTTPOK(ctx context.Context, client *http.Client, url string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return true, nil
}

// ApplyOptions are the server-side apply options of everything the stack creates.
var ApplyOptions = metav1.ApplyOptions{FieldManager: "kcp-setups-local-stack", Force: true}
