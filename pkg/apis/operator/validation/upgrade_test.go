package validation

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestValidateSetupVersion(t *testing.T) {
	window := func(start string, d time.Duration, zone string, days ...string) *operator.Maintenance {
		return &operator.Maintenance{Window: operator.MaintenanceWindow{Days: days, Start: start, Duration: metav1.Duration{Duration: d}, TimeZone: zone}}
	}
	tests := []struct {
		name   string
		mutate func(*operator.RootShard)
		want   []wantErr
	}{
		{name: "no version: as before", mutate: func(*operator.RootShard) {}},
		{name: "a release of the flag table", mutate: func(rs *operator.RootShard) { rs.Spec.Version = "v0.31.6" }},
		{
			name:   "a release the flag table does not know",
			mutate: func(rs *operator.RootShard) { rs.Spec.Version = "v0.31.5" },
			want:   []wantErr{notSupported("spec.version", `supported values: "v0.30.0", "v0.30.1", "v0.30.2", "v0.30.3", "v0.31.0"`)},
		},
		{
			name:   "a release without its v, which is no image tag",
			mutate: func(rs *operator.RootShard) { rs.Spec.Version = "0.31.6" },
			want:   []wantErr{notSupported("spec.version")},
		},
		{
			name:   "not a release at all",
			mutate: func(rs *operator.RootShard) { rs.Spec.Version = "main" },
			want:   []wantErr{notSupported("spec.version", `"v0.32.3"`)},
		},
		{
			name: "a progress deadline",
			mutate: func(rs *operator.RootShard) {
				rs.Spec.Upgrade = &operator.UpgradeStrategy{ProgressDeadlineSeconds: ptr[int32](1)}
			},
		},
		{
			name: "a progress deadline of zero",
			mutate: func(rs *operator.RootShard) {
				rs.Spec.Upgrade = &operator.UpgradeStrategy{ProgressDeadlineSeconds: ptr[int32](0)}
			},
			want: []wantErr{invalid("spec.upgrade.progressDeadlineSeconds", "must be between 1 and 86400 (a day)")},
		},
		{
			name: "a progress deadline over a day",
			mutate: func(rs *operator.RootShard) {
				rs.Spec.Upgrade = &operator.UpgradeStrategy{ProgressDeadlineSeconds: ptr[int32](86401)}
			},
			want: []wantErr{invalid("spec.upgrade.progressDeadlineSeconds")},
		},
		{
			name: "a window with autoUpdate Patch",
			mutate: func(rs *operator.RootShard) {
				rs.Spec.Version = "v0.32.1"
				rs.Spec.Maintenance = window("23:00", 3*time.Hour, "Europe/Berlin", "Saturday", "Wednesday")
				rs.Spec.Maintenance.AutoUpdate = operator.AutoUpdatePatch
			},
		},
		{
			name:   "a window without a version, autoUpdate None",
			mutate: func(rs *operator.RootShard) { rs.Spec.Maintenance = window("00:00", 24*time.Hour, "") },
		},
		{
			name: "autoUpdate Patch without a version",
			mutate: func(rs *operator.RootShard) {
				rs.Spec.Maintenance = window("02:00", time.Hour, "")
				rs.Spec.Maintenance.AutoUpdate = operator.AutoUpdatePatch
			},
			want: []wantErr{required("spec.version", "autoUpdate Patch moves the setup to the newest patch")},
		},
		{
			name: "autoUpdate neither None nor Patch",
			mutate: func(rs *operator.RootShard) {
				rs.Spec.Maintenance = window("02:00", time.Hour, "")
				rs.Spec.Maintenance.AutoUpdate = "Minor"
			},
			want: []wantErr{notSupported("spec.maintenance.autoUpdate", `"None", "Patch"`)},
		},
		{
			name:   "no start",
			mutate: func(rs *operator.RootShard) { rs.Spec.Maintenance = window("", time.Hour, "") },
			want:   []wantErr{required("spec.maintenance.window.start")},
		},
		{
			name:   "a start that is no time of day",
			mutate: func(rs *operator.RootShard) { rs.Spec.Maintenance = window("24:00", time.Hour, "") },
			want:   []wantErr{invalid("spec.maintenance.window.start", `must be "HH:MM" between 00:00 and 23:59`)},
		},
		{
			name:   "a start without its leading zero",
			mutate: func(rs *operator.RootShard) { rs.Spec.Maintenance = window("2:00", time.Hour, "") },
			want:   []wantErr{invalid("spec.maintenance.window.start")},
		},
		{
			name:   "a window too short",
			mutate: func(rs *operator.RootShard) { rs.Spec.Maintenance = window("02:00", 29*time.Minute, "") },
			want:   []wantErr{invalid("spec.maintenance.window.duration", "must be between 30m and 24h")},
		},
		{
			name:   "no duration",
			mutate: func(rs *operator.RootShard) { rs.Spec.Maintenance = window("02:00", 0, "") },
			want:   []wantErr{invalid("spec.maintenance.window.duration")},
		},
		{
			name:   "a window too long",
			mutate: func(rs *operator.RootShard) { rs.Spec.Maintenance = window("02:00", 25*time.Hour, "") },
			want:   []wantErr{invalid("spec.maintenance.window.duration")},
		},
		{
			name: "a day that is no weekday name, a day twice",
			mutate: func(rs *operator.RootShard) {
				rs.Spec.Maintenance = window("02:00", time.Hour, "", "Monday", "tuesday", "Monday")
			},
			want: []wantErr{notSupported("spec.maintenance.window.days[1]", `"Sunday", "Monday"`), duplicate("spec.maintenance.window.days[2]")},
		},
		{
			name:   "an unknown time zone",
			mutate: func(rs *operator.RootShard) { rs.Spec.Maintenance = window("02:00", time.Hour, "Europe/Atlantis") },
			want:   []wantErr{invalid("spec.maintenance.window.timeZone", "must be an IANA time zone name")},
		},
		{
			name:   "the server's local time zone",
			mutate: func(rs *operator.RootShard) { rs.Spec.Maintenance = window("02:00", time.Hour, "Local") },
			want:   []wantErr{invalid("spec.maintenance.window.timeZone", "the server's local time zone")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := validRootShard()
			tc.mutate(rs)
			assertErrors(t, tc.want, ValidateRootShard(rs))
			// The same on an update.
			old := validRootShard()
			old.ObjectMeta = updatedObjectMeta("root")
			rs.ObjectMeta = updatedObjectMeta("root")
			assertErrors(t, tc.want, ValidateRootShardUpdate(rs, old))
		})
	}
}
