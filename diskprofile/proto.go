package diskprofile

import (
	"google.golang.org/protobuf/types/known/durationpb"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// ToProto is a spec as a RunSpec carries it.
func ToProto(s Spec) *writepathv1.DiskSpec {
	d := &writepathv1.DiskSpec{Name: s.Name, BaselineIops: s.BaselineIOPS, BaselineBps: s.BaselineBPS,
		BurstIops: s.BurstIOPS, BurstBps: s.BurstBPS, Bucket: s.Bucket, Refill: s.Refill, Credits: s.Credits,
		Device: s.Device, FsDir: s.FS.Dir, FsType: s.FS.Type, FsSize: s.FS.Size, MountOptions: s.FS.MountOptions}
	if s.Latency > 0 {
		d.Latency = durationpb.New(s.Latency)
	}
	return d
}

// FromProto is a received spec, validated (a coordinator's message is
// input like any other).
func FromProto(d *writepathv1.DiskSpec) (Spec, error) {
	s := Spec{Profile: Profile{Name: d.GetName(), BaselineIOPS: d.GetBaselineIops(), BaselineBPS: d.GetBaselineBps(),
		BurstIOPS: d.GetBurstIops(), BurstBPS: d.GetBurstBps(), Bucket: d.GetBucket(), Refill: d.GetRefill(),
		Credits: d.GetCredits(), Latency: d.GetLatency().AsDuration()},
		Device: d.GetDevice(), FS: LoopFS{Dir: d.GetFsDir(), Type: d.GetFsType(), Size: d.GetFsSize(), MountOptions: d.GetMountOptions()}}
	if p, ok := Builtin(s.Name); ok {
		s.Source = p.Source
	}
	return s, s.Validate()
}
