package framework

import (
	"strconv"
	"strings"
)

// RootShardManifest is a minimal RootShard as YAML: name, served at hostname:port, on an etcd
// that no test reaches. The end-to-end tests and the kcp double's own test start from it.
func RootShardManifest(name, hostname string, port int) string {
	return strings.NewReplacer("NAME", name, "HOST", hostname, "PORT", strconv.Itoa(port)).Replace(`apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: NAME
spec:
  external:
    hostname: HOST
    port: PORT
  etcd:
    endpoints: [https://etcd.example.com:2379]
`)
}
