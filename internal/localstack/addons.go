package localstack

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// FakeNode is the name of the node kwok runs pods on.
const FakeNode = "kwok-node-0"

var (
	crdGVR         = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	apiServiceGVR  = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	clusterLogsGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "clusterlogs"}
)

// startKwok starts kwok, managing the nodes annotated as fake, and creates one such node
// with room for many pods, so that Deployments get pods that turn Running and Ready.
func (s *Stack) startKwok(ctx context.Context) error {
	stages, err := filepath.Glob(filepath.Join(filepath.Dir(s.binDir), "kwok-stages", "*.yaml"))
	if err != nil || len(stages) == 0 {
		return fmt.Errorf("no kwok stages in _output/kwok-stages: run `make tools`")
	}
	// kwok's node serves what a kubelet would on loopback, so that kube-apiserver can
	// port-forward to its pods and read their logs; ClusterPortForward objects say where a
	// port leads, ClusterLogs objects which file a pod's logs are.
	crds := filepath.Join(filepath.Dir(s.binDir), "kwok-crds")
	if out, err := s.Kubectl(ctx, "apply", "--server-side", "--field-manager=kcp-setups-local-stack", "-f", crds); err != nil {
		return fmt.Errorf("applying kwok's CRDs (run `make tools`): %w: %s", err, out)
	}
	for _, name := range []string{"clusterportforwards.kwok.x-k8s.io", "clusterlogs.kwok.x-k8s.io"} {
		if err := Poll(ctx, name+" to be established", time.Minute, nil, func(ctx context.Context) (bool, error) {
			crd, err := s.Dynamic.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			return err == nil && UnstructuredCondition(crd, "Established"), nil
		}); err != nil {
			return fmt.Errorf("%w (run `make tools`)", err)
		}
	}
	if err := s.applyPodLogs(ctx); err != nil {
		return err
	}
	nodePort, err := FreePort()
	if err != nil {
		return err
	}
	p, err := s.start("kwok",
		"--kubeconfig="+s.AdminKubeconfig,
		"--config="+strings.Join(stages, ","),
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--node-ip=127.0.0.1",
		"--node-port="+strconv.Itoa(nodePort),
		"--enable-crds=ClusterPortForward,ClusterLogs",
	)
	if err != nil {
		return err
	}
	// The components request what production needs (a shard 1 CPU and 1Gi per replica), and
	// the suite runs many setups one after another whose pods may linger: the fake node has
	// room for some hundred setups, it runs nothing.
	resources := corev1.ResourceList{}
	for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: "1000", corev1.ResourceMemory: "4Ti", corev1.ResourcePods: "2000"} {
		resources[name] = resource.MustParse(q)
	}
	node := corev1ac.Node(FakeNode).
		WithAnnotations(map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}).
		WithLabels(map[string]string{"kubernetes.io/hostname": FakeNode, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok"}).
		WithStatus(corev1ac.NodeStatus().WithAllocatable(resources).WithCapacity(resources))
	if _, err := s.Kube.CoreV1().Nodes().Apply(ctx, node, ApplyOptions); err != nil {
		return err
	}
	// kwok writes the port it serves on into the node's status only when it initializes the
	// node. On kept state (a second `make run`) the node is still Ready from the last run and
	// would keep advertising that run's port, so kube-apiserver's logs, exec and port-forward
	// would dial a port nobody listens on: the node advertises this run's port.
	endpoints := corev1ac.NodeStatus().WithDaemonEndpoints(corev1ac.NodeDaemonEndpoints().
		WithKubeletEndpoint(corev1ac.DaemonEndpoint().WithPort(int32(nodePort))))
	if _, err := s.Kube.CoreV1().Nodes().ApplyStatus(ctx, corev1ac.Node(FakeNode).WithStatus(endpoints), ApplyOptions); err != nil {
		return fmt.Errorf("advertising kwok's port on the fake node: %w", err)
	}
	return Poll(ctx, "the fake node to be Ready", 2*time.Minute, []*Process{p}, func(ctx context.Context) (bool, error) {
		n, err := s.Kube.CoreV1().Nodes().Get(ctx, FakeNode, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
}

// PodLog is what `kubectl logs` answers for every pod of the stack: kwok runs no container.
const PodLog = "kwok simulates this pod on the local stack: no container runs, so it writes no logs.\n"

// applyPodLogs makes kwok answer PodLog for the logs of every container of every pod, rather
// than an error.
func (s *Stack) applyPodLogs(ctx context.Context) error {
	file := s.Path("kwok-pod.log")
	// kwok reads the file as a container runtime writes one (CRI's log format): a time, the
	// stream, F for a full line, and the line.
	line := time.Now().UTC().Format(time.RFC3339Nano) + " stdout F " + PodLog
	if err := os.WriteFile(file, []byte(line), 0o644); err != nil {
		return err
	}
	logs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterLogs",
		"metadata": map[string]any{"name": "local-stack"},
		"spec":     map[string]any{"logs": []any{map[string]any{"logsFile": file}}},
	}}
	if _, err := s.Dynamic.Resource(clusterLogsGVR).Apply(ctx, "local-stack", logs, ApplyOptions); err != nil {
		return fmt.Errorf("applying kwok's ClusterLogs: %w", err)
	}
	return nil
}

// startCertManager installs cert-manager's CRDs and starts its controllers.
func (s *Stack) startCertManager(ctx context.Context) error {
	if err := s.ApplyCertManagerCRDs(ctx); err != nil {
		return err
	}
	return s.StartCertManager()
}

// StartServer starts the kcp-setups server on its port, registers it with the aggregation
// layer, and waits until kube-apiserver serves its group.
func (s *Stack) StartServer(ctx context.Context) error {
	if s.ServerPort == 0 {
		port, err := FreePort()
		if err != nil {
			return err
		}
		s.ServerPort = port
	}
	if s.LinkPort == 0 {
		port, err := FreePort()
		if err != nil {
			return err
		}
		s.LinkPort = port
	}
	args := append(s.ServingArgs(s.ServerPort), s.DelegationArgs(s.AdminKubeconfig)...)
	args = append(args, "--link-bind-address=127.0.0.1:"+strconv.Itoa(s.LinkPort))
	// The image of a managed etcd's backup agent: kwok runs no pod, any name does.
	args = append(args, "--etcd-agent-image=ghcr.io/kcp-setups/apiserver:latest")
	if s.opts.LogReconciles {
		args = append(args, "--vmodule=queue=4")
	}
	if s.opts.EmbeddedEtcd {
		args = append(args, "--embedded-etcd-dir="+s.Path("kcp-setups-etcd"))
	} else {
		args = append(args, "--etcd-servers="+s.EtcdURL)
	}
	p, err := s.startServerProcess(ctx, "kcp-setups-apiserver", s.ServerPort, args)
	if err != nil {
		return err
	}
	s.server = p
	// Registered only once the server answers: kube-apiserver backs off from an APIService
	// whose first checks failed.
	if err := s.register(ctx); err != nil {
		return err
	}
	return s.WaitForServer(ctx)
}

// StopServer stops the kcp-setups server with SIGTERM.
func (s *Stack) StopServer() {
	if s.server != nil {
		s.server.Stop()
	}
}

// WaitForServer waits until the APIService is Available and discovery lists the group.
func (s *Stack) WaitForServer(ctx context.Context) error {
	watched := []*Process{s.server}
	if err := Poll(ctx, "the APIService to be Available", 2*time.Minute, watched, func(ctx context.Context) (bool, error) {
		svc, err := s.Dynamic.Resource(apiServiceGVR).Get(ctx, "v1alpha1.operator.kcp.io", metav1.GetOptions{})
		return err == nil && UnstructuredCondition(svc, "Available"), err
	}); err != nil {
		return err
	}
	// kubectl explain reads kube-apiserver's aggregated OpenAPI, which downloads the server's
	// spec on its own schedule too.
	if err := Poll(ctx, "aggregated OpenAPI v3 to describe RootShard", 2*time.Minute, watched, func(ctx context.Context) (bool, error) {
		raw, err := s.Kube.Discovery().RESTClient().Get().AbsPath("/openapi/v3/apis/operator.kcp.io/v1alpha1").DoRaw(ctx)
		return err == nil && strings.Contains(string(raw), "io.kcp.operator.v1alpha1.RootShard"), err
	}); err != nil {
		return err
	}
	// kubectl resolves `get kcp` through kube-apiserver's aggregated discovery, which fetches
	// an APIService's resources on its own schedule after it turns Available, and marks them
	// Stale (so that kubectl skips them) when that fetch failed.
	return Poll(ctx, "aggregated discovery to list operator.kcp.io as current", 2*time.Minute, watched, func(ctx context.Context) (bool, error) {
		raw, err := s.Kube.Discovery().RESTClient().Get().AbsPath("/apis").
			SetHeader("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList").DoRaw(ctx)
		if err != nil {
			return false, err
		}
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(raw, &list); err != nil {
			return false, err
		}
		for _, g := range list.Items {
			for _, v := range g.Versions {
				if g.Name != "operator.kcp.io" || v.Version != "v1alpha1" || v.Freshness == apidiscoveryv2.DiscoveryFreshnessStale {
					continue
				}
				for _, r := range v.Resources {
					if r.Resource == "rootshards" && slices.Contains(r.Categories, "kcp") {
						return true, nil
					}
				}
			}
		}
		return false, fmt.Errorf("operator.kcp.io/v1alpha1 is not yet current in aggregated discovery")
	})
}

// register creates the Service and APIService through which kube-apiserver reaches the
// server. Endpoints may not hold loopback addresses, so the Service is an ExternalName for
// localhost; the APIService trusts the server's real CA.
func (s *Stack) register(ctx context.Context) error {
	if _, err := s.Kube.CoreV1().Namespaces().Apply(ctx, corev1ac.Namespace(ServerNamespace), ApplyOptions); err != nil {
		return err
	}
	svc := corev1ac.Service(ServerService, ServerNamespace).WithSpec(corev1ac.ServiceSpec().
		WithType(corev1.ServiceTypeExternalName).WithExternalName("localhost").
		WithPorts(corev1ac.ServicePort().WithName("https").WithPort(int32(s.ServerPort))))
	if _, err := s.Kube.CoreV1().Services(ServerNamespace).Apply(ctx, svc, ApplyOptions); err != nil {
		return err
	}
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": "v1alpha1.operator.kcp.io"},
		"spec": map[string]any{
			"group":                "operator.kcp.io",
			"version":              "v1alpha1",
			"service":              map[string]any{"namespace": ServerNamespace, "name": ServerService, "port": int64(s.ServerPort)},
			"caBundle":             base64.StdEncoding.EncodeToString(s.pki.server.CertPEM),
			"groupPriorityMinimum": int64(1000),
			"versionPriority":      int64(15),
		},
	}}
	_, err := s.Dynamic.Resource(apiServiceGVR).Apply(ctx, apiService.GetName(), apiService, ApplyOptions)
	return err
}

// KubectlFlags are the flags of every kubectl the stack runs. Its discovery cache is its own:
// the stack runs kubectl before the APIService exists, and a shared cache would hide the
// group from the user's next kubectl.
func (s *Stack) KubectlFlags(kubeconfig string) []string {
	return []string{"--kubeconfig=" + kubeconfig, "--cache-dir=" + s.Path("kubectl-cache")}
}

// Kubectl runs the stack's kubectl as the admin and returns its combined output.
func (s *Stack) Kubectl(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, s.Bin("kubectl"), append(s.KubectlFlags(s.AdminKubeconfig), args...)...)
	out, err := cmd.CombinedOutput()
	s.observeKubectl(args, string(out))
	return string(out), err
}

// UnstructuredCondition reports whether obj has a status condition of type t that is True.
func UnstructuredCondition(obj *unstructured.Unstructured, t string) bool {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if ok && m["type"] == t {
			return m["status"] == string(metav1.ConditionTrue)
		}
	}
	return false
}

// KillServer ends the kcp-setups server with SIGKILL, as a crash or an OOM kill would.
func (s *Stack) KillServer() {
	if s.server != nil {
		s.server.Kill()
	}
}
