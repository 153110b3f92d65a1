package kcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// PortForward opens each connection as a port-forward stream through the host's
// kube-apiserver to a ready pod behind the endpoint's Service, as `kubectl port-forward`
// does. kube-apiserver's service proxy would not do: it dials backends without verifying
// them and without a client certificate, and drops the caller's credentials, so kcp would
// see an anonymous caller. A port-forward stream carries bytes, so TLS, and the server's
// client certificate, go end to end. The host identity needs `get`/`list` on pods and
// `create` on pods/portforward in the setups' namespaces.
type PortForward struct {
	kube      kubernetes.Interface
	upgrader  spdy.Upgrader
	transport http.RoundTripper
	requestID atomic.Int64
}

// NewPortForward returns a port-forward dialer through the kube-apiserver host reaches.
func NewPortForward(host *rest.Config) (*PortForward, error) {
	if host == nil {
		return nil, errors.New("the port-forward kcp dialer needs a host cluster")
	}
	kube, err := kubernetes.NewForConfig(host)
	if err != nil {
		return nil, err
	}
	transport, upgrader, err := spdy.RoundTripperFor(host)
	if err != nil {
		return nil, err
	}
	return &PortForward{kube: kube, upgrader: upgrader, transport: transport}, nil
}

// Dial implements Dialer.
func (d *PortForward) Dial(ctx context.Context, ep Endpoint) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	pod, err := d.readyPod(ctx, ep)
	if err != nil {
		return nil, err
	}
	url := d.kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(ep.Namespace).Name(pod).SubResource("portforward").URL()
	type result struct {
		conn httpstream.Connection
		err  error
	}
	done := make(chan result, 1)
	go func() {
		dialer := spdy.NewDialer(d.upgrader, &http.Client{Transport: d.transport}, http.MethodPost, url)
		conn, _, err := dialer.Dial(portforward.PortForwardProtocolV1Name)
		done <- result{conn, err}
	}()
	var conn httpstream.Connection
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("port-forward to pod %s/%s: %w", ep.Namespace, pod, r.err)
		}
		conn = r.conn
	case <-ctx.Done():
		// The upgrade has no context: close what it brings when it comes.
		go func() {
			if r := <-done; r.conn != nil {
				_ = r.conn.Close()
			}
		}()
		return nil, fmt.Errorf("port-forward to pod %s/%s: %w", ep.Namespace, pod, ctx.Err())
	}
	c, err := d.open(conn, ep.Port)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("port-forward to pod %s/%s: %w", ep.Namespace, pod, err)
	}
	c.addr = podAddr(ep.Namespace + "/" + pod + ":" + strconv.Itoa(int(ep.Port)))
	return c, nil
}

// open creates the error and data streams of one forwarded connection to port.
func (d *PortForward) open(conn httpstream.Connection, port int32) (*streamConn, error) {
	headers := http.Header{}
	headers.Set(corev1.StreamType, corev1.StreamTypeError)
	headers.Set(corev1.PortHeader, strconv.Itoa(int(port)))
	headers.Set(corev1.PortForwardRequestIDHeader, strconv.FormatInt(d.requestID.Add(1), 10))
	errorStream, err := conn.CreateStream(headers)
	if err != nil {
		return nil, err
	}
	// Only the pod side writes to the error stream.
	_ = errorStream.Close()
	headers.Set(corev1.StreamType, corev1.StreamTypeData)
	data, err := conn.CreateStream(headers)
	if err != nil {
		return nil, err
	}
	c := &streamConn{conn: conn, data: data}
	go c.watchErrors(errorStream)
	return c, nil
}

// readyPod picks a ready, running pod of the endpoint that is not being deleted, the
// newest first, as a Service would only route to a ready one.
func (d *PortForward) readyPod(ctx context.Context, ep Endpoint) (string, error) {
	pods, err := d.kube.CoreV1().Pods(ep.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(ep.Selector).String(),
	})
	if err != nil {
		return "", fmt.Errorf("listing the pods of %s: %w", ep, err)
	}
	var ready []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(&p) {
			ready = append(ready, p)
		}
	}
	if len(ready) == 0 {
		return "", fmt.Errorf("%s has no ready pod to port-forward to", ep)
	}
	slices.SortFunc(ready, func(a, b corev1.Pod) int { return b.CreationTimestamp.Compare(a.CreationTimestamp.Time) })
	return ready[0].Name, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// streamConn is one forwarded connection as a net.Conn: reads and writes go to the data
// stream; closing it closes the whole port-forward connection, which carries only it.
type streamConn struct {
	conn httpstream.Connection
	data httpstream.Stream
	addr net.Addr

	mu     sync.Mutex
	remote error
	closed sync.Once
}

// watchErrors reads what the pod side reports on the error stream (say, nothing listens on
// the port) and ends the connection with it.
func (c *streamConn) watchErrors(s httpstream.Stream) {
	msg, err := io.ReadAll(s)
	if len(msg) == 0 && (err == nil || errors.Is(err, io.EOF)) {
		return
	}
	c.mu.Lock()
	c.remote = fmt.Errorf("port-forward: %s", msg)
	c.mu.Unlock()
	_ = c.Close()
}

func (c *streamConn) Read(p []byte) (int, error) {
	n, err := c.data.Read(p)
	if err != nil {
		c.mu.Lock()
		if c.remote != nil {
			err = c.remote
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *streamConn) Write(p []byte) (int, error) { return c.data.Write(p) }

func (c *streamConn) Close() error {
	c.closed.Do(func() {
		_ = c.data.Reset()
		_ = c.conn.Close()
	})
	return nil
}

func (c *streamConn) LocalAddr() net.Addr  { return podAddr("kcp-setups") }
func (c *streamConn) RemoteAddr() net.Addr { return c.addr }

// The stream has no deadlines of its own; TLS and HTTP bound their waits by closing it.
func (c *streamConn) SetDeadline(time.Time) error      { return nil }
func (c *streamConn) SetReadDeadline(time.Time) error  { return nil }
func (c *streamConn) SetWriteDeadline(time.Time) error { return nil }

// podAddr names the far end of a forwarded connection.
type podAddr string

func (a podAddr) Network() string { return "port-forward" }
func (a podAddr) String() string  { return string(a) }
