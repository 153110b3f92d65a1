package mountpaths_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
)

// fixtureExtras are the user's extraVolumeMounts, and an init container's own volumeMounts,
// in the builders' fixtures, by volume name: the only mounts in the golden files that the
// controllers do not own.
var fixtureExtras = map[string]bool{"extra": true, "scratch": true, "seed": true}

// TestEveryBuilderMountIsReserved reads every Deployment of the builders' golden files and
// checks that each mount the controllers make is reserved for its container, so that
// validation, which reserves these lists, refuses an extra mount there. A builder that
// mounts a new directory fails here until the directory is added to its list.
func TestEveryBuilderMountIsReserved(t *testing.T) {
	reserved := map[string][]string{
		"kcp":                mountpaths.KcpServer(),
		"kcp-front-proxy":    mountpaths.FrontProxy(),
		"cache-server":       mountpaths.CacheServer(),
		"virtual-workspaces": mountpaths.VirtualWorkspace(),
	}
	// Every init container is a VirtualWorkspace's, whatever its name.
	initReserved := mountpaths.VirtualWorkspaceInit()
	seenInit := 0
	files, err := filepath.Glob("../*/testdata/*.yaml")
	require.NoError(t, err)
	seen := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, doc := range bytes.Split(data, []byte("\n---\n")) {
			var d appsv1.Deployment
			if err := yaml.Unmarshal(doc, &d); err != nil || d.Kind != "Deployment" {
				continue
			}
			for _, c := range d.Spec.Template.Spec.Containers {
				dirs, ok := reserved[c.Name]
				require.True(t, ok, "%s: container %q has no reserved list", file, c.Name)
				for _, m := range c.VolumeMounts {
					if fixtureExtras[m.Name] {
						continue
					}
					seen++
					_, found := mountpaths.Overlaps(filepath.Clean(m.MountPath), dirs)
					assert.True(t, found, "%s: %s mounts %s, which is not reserved", file, c.Name, m.MountPath)
				}
			}
			for _, c := range d.Spec.Template.Spec.InitContainers {
				for _, m := range c.VolumeMounts {
					if fixtureExtras[m.Name] {
						continue
					}
					seenInit++
					_, found := mountpaths.Overlaps(filepath.Clean(m.MountPath), initReserved)
					assert.True(t, found, "%s: init container %s mounts %s, which is not reserved", file, c.Name, m.MountPath)
				}
			}
		}
	}
	assert.Greater(t, seen, 40, "the golden files' mounts are checked")
	assert.Greater(t, seenInit, 5, "the golden files' init containers' mounts are checked")
}

// TestVirtualWorkspaceVolumesHaveTheReservedPrefix reads every VirtualWorkspace Deployment
// of the golden files and checks that each volume the controllers add has the prefix that
// validation keeps the user's volumes off.
func TestVirtualWorkspaceVolumesHaveTheReservedPrefix(t *testing.T) {
	files, err := filepath.Glob("../virtualworkspace/testdata/*.yaml")
	require.NoError(t, err)
	seen := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, doc := range bytes.Split(data, []byte("\n---\n")) {
			var d appsv1.Deployment
			if err := yaml.Unmarshal(doc, &d); err != nil || d.Kind != "Deployment" {
				continue
			}
			for _, v := range d.Spec.Template.Spec.Volumes {
				if fixtureExtras[v.Name] {
					continue
				}
				seen++
				assert.True(t, strings.HasPrefix(v.Name, mountpaths.VirtualWorkspaceVolumePrefix), "%s: volume %s", file, v.Name)
			}
		}
	}
	assert.Greater(t, seen, 20, "the golden files' volumes are checked")
}

func TestOverlaps(t *testing.T) {
	reserved := []string{"/etc/kcp/tls", "/var/etcd"}
	tests := []struct {
		dir  string
		want string
	}{
		{dir: "/etc/kcp/tls", want: "/etc/kcp/tls"},
		{dir: "/etc/kcp/tls/server", want: "/etc/kcp/tls"},
		{dir: "/etc/kcp", want: "/etc/kcp/tls"},
		{dir: "/", want: "/etc/kcp/tls"},
		{dir: "/var", want: "/var/etcd"},
		{dir: "/etc/kcp/encryption"},
		{dir: "/etc/kcp/tlsx"},
		{dir: "/var/etcd-backup"},
	}
	for _, tc := range tests {
		got, found := mountpaths.Overlaps(tc.dir, reserved)
		assert.Equal(t, tc.want, got, tc.dir)
		assert.Equal(t, tc.want != "", found, tc.dir)
	}
}

// TestVirtualWorkspaceInitReservesTheServers: an init container inherits the server
// container's mounts, so every directory reserved in the server is reserved in it too.
func TestVirtualWorkspaceInitReservesTheServers(t *testing.T) {
	initDirs := mountpaths.VirtualWorkspaceInit()
	for _, dir := range mountpaths.VirtualWorkspace() {
		assert.Contains(t, initDirs, dir)
	}
	assert.Contains(t, initDirs, mountpaths.VirtualWorkspaceInitKubeconfigDir)
}
