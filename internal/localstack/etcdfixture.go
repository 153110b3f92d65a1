package localstack

import (
	"crypto/x509"
	"fmt"
	"net"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// EtcdFixture is a managed etcd built by hand, after the contract of
// docs/etcd.md (names, args, mounts, SANs), with certificates of CAs made
// for it: the harness's proof of itself, without the server's builders.
type EtcdFixture struct {
	StatefulSet *appsv1.StatefulSet
	// Secrets are the Secrets the StatefulSet mounts, by name: <base>-etcd-server and
	// <base>-etcd-peer.
	Secrets map[string]*corev1.Secret
	// Client is kcp's client certificate, <base>-etcd-client (ca.crt is the etcd client CA,
	// which issued the server certificate too).
	Client *corev1.Secret
	// Foreign is a client certificate of the same name from another etcd client CA, as
	// another RootShard's would be; its ca.crt is that other CA.
	Foreign *corev1.Secret
}

// etcdClusterDomain is the cluster domain of the fixture's DNS names.
const etcdClusterDomain = "cluster.local"

// NewEtcdFixture builds the managed etcd of base (such as a RootShard's name) in namespace,
// writing its CAs and certificates under dir.
func NewEtcdFixture(dir, namespace, base string, replicas int32) (*EtcdFixture, error) {
	sts, headless := base+"-etcd", base+"-etcd-peers"
	var memberNames, initial []string
	for i := range replicas {
		pod := fmt.Sprintf("%s-%d", sts, i)
		fqdn := fmt.Sprintf("%s.%s.%s.svc.%s", pod, headless, namespace, etcdClusterDomain)
		memberNames = append(memberNames, dnsForms(pod+"."+headless, namespace)...)
		initial = append(initial, fmt.Sprintf("%s=https://%s:2380", pod, fqdn))
	}

	clientCA, err := LoadOrCreateCA(dir, "etcd-client-ca")
	if err != nil {
		return nil, err
	}
	peerCA, err := LoadOrCreateCA(dir, "etcd-peer-ca")
	if err != nil {
		return nil, err
	}
	foreignCA, err := LoadOrCreateCA(dir, "other-etcd-client-ca")
	if err != nil {
		return nil, err
	}
	both := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	server, err := clientCA.Issue(dir, "etcd-server", CertSpec{
		CommonName: base + "-etcd-server",
		DNSNames:   append(append(memberNames, dnsForms(sts, namespace)...), "localhost"),
		IPs:        []net.IP{net.ParseIP("127.0.0.1")},
		Usages:     both,
	})
	if err != nil {
		return nil, err
	}
	peer, err := peerCA.Issue(dir, "etcd-peer", CertSpec{
		CommonName: base + "-etcd-peer",
		DNSNames:   append(memberNames, "localhost"),
		Usages:     both,
	})
	if err != nil {
		return nil, err
	}
	client, err := clientCA.ClientCert(dir, "etcd-client", base+"-kcp")
	if err != nil {
		return nil, err
	}
	foreign, err := foreignCA.ClientCert(dir, "other-etcd-client", base+"-kcp")
	if err != nil {
		return nil, err
	}
	secret := func(name string, kp *KeyPair, ca *CA) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{"tls.crt": kp.CertPEM, "tls.key": kp.KeyPEM, "ca.crt": ca.CertPEM},
		}
	}
	f := &EtcdFixture{
		Secrets: map[string]*corev1.Secret{
			base + "-etcd-server": secret(base+"-etcd-server", server, clientCA),
			base + "-etcd-peer":   secret(base+"-etcd-peer", peer, peerCA),
		},
		Client:  secret(base+"-etcd-client", client, clientCA),
		Foreign: secret("other-etcd-client", foreign, foreignCA),
	}

	self := "$(POD_NAME)." + headless + "." + namespace + ".svc." + etcdClusterDomain
	labels := map[string]string{"app.kubernetes.io/instance": base, "app.kubernetes.io/component": "etcd"}
	probe := func(path string, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("metrics")}},
			FailureThreshold: failures,
		}
	}
	f.StatefulSet = &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: sts, Namespace: namespace, Labels: labels},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(replicas),
			ServiceName:         headless,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532), FSGroup: ptr.To[int64](65532),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:    "etcd",
						Image:   "quay.io/coreos/etcd:v3.6.6",
						Command: []string{"etcd"},
						Env: []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
							FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"},
						}}},
						Args: []string{
							"--name=$(POD_NAME)",
							"--data-dir=/var/lib/etcd/data",
							"--listen-peer-urls=https://0.0.0.0:2380",
							"--listen-client-urls=https://0.0.0.0:2379",
							"--listen-metrics-urls=http://0.0.0.0:2381",
							"--advertise-client-urls=https://" + self + ":2379",
							"--initial-advertise-peer-urls=https://" + self + ":2380",
							"--initial-cluster=" + strings.Join(initial, ","),
							"--initial-cluster-state=new",
							"--initial-cluster-token=" + namespace + "." + sts,
							"--client-cert-auth=true",
							"--trusted-ca-file=/etc/etcd/tls/server/ca.crt",
							"--cert-file=/etc/etcd/tls/server/tls.crt",
							"--key-file=/etc/etcd/tls/server/tls.key",
							"--peer-client-cert-auth=true",
							"--peer-trusted-ca-file=/etc/etcd/tls/peer/ca.crt",
							"--peer-cert-file=/etc/etcd/tls/peer/tls.crt",
							"--peer-key-file=/etc/etcd/tls/peer/tls.key",
							"--auto-compaction-mode=periodic",
							"--auto-compaction-retention=5m",
						},
						Ports: []corev1.ContainerPort{
							{Name: "client", ContainerPort: 2379},
							{Name: "peer", ContainerPort: 2380},
							{Name: "metrics", ContainerPort: 2381},
						},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "server-tls", MountPath: "/etc/etcd/tls/server", ReadOnly: true},
							{Name: "peer-tls", MountPath: "/etc/etcd/tls/peer", ReadOnly: true},
							{Name: "data", MountPath: "/var/lib/etcd"},
						},
						ReadinessProbe: probe("/readyz", 3),
						LivenessProbe:  probe("/livez", 3),
						StartupProbe:   probe("/readyz", 60),
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "server-tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: base + "-etcd-server"}}},
						{Name: "peer-tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: base + "-etcd-peer"}}},
					},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("8Gi")}},
				},
			}},
		},
	}
	return f, nil
}

// dnsForms are the names of a Service (or a pod under a headless Service, name
// <pod>.<headless>) in the cluster: short, with the namespace, with .svc, and fully
// qualified.
func dnsForms(name, namespace string) []string {
	return []string{name, name + "." + namespace, name + "." + namespace + ".svc", name + "." + namespace + ".svc." + etcdClusterDomain}
}
