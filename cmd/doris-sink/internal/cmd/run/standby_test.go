package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Issue 22: with the default config (job.slots 1, job.coordinator kafka) a
// second process of the job is a ready standby, not a fence: it joins the
// group, owns nothing and loads nothing while the first owns slot 0, and
// takes slot 0 over as soon as the owner stops (SIGTERM: the owner drains
// and leaves the group, so nobody waits for its session to expire). Every
// record is loaded exactly once.
func TestStandbyTakesOverWhenTheOwnerLeaves(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 3, 1)
	e.session = "30s" // a takeover waiting out the session would outlast the test
	a := e.start("a", "")
	e.ownership(map[*groupMember]int{a: 1})
	e.produce(30)
	b := e.start("b", "")
	e.waitUntil("b in the group as a standby", func() bool { return b.assigns > 0 })
	e.waitAllDecided()
	e.mu.Lock()
	if len(b.owned) != 0 || b.starts != 0 {
		t.Errorf("standby b owns %v and started %d slot jobs while a owns slot 0, want none", b.ownedLocked(), b.starts)
	}
	e.mu.Unlock()
	if err := e.stop(a); err != nil {
		t.Fatalf("owner a: SIGTERM: %v", err)
	}
	a.tap.wait(t, "group mode: left the group; the member's slots move to another member now")
	e.ownership(map[*groupMember]int{b: 1})
	e.produce(30)
	e.waitAllDecided()
	if err := e.stop(b); err != nil {
		t.Fatalf("b: SIGTERM: %v", err)
	}
	e.checkExactlyOnce()
}

// Issue 22: the owner killed (kill -9: no leave, its slot stays reserved
// for its instance id) and restarted on the same job.data_dir rejoins at
// once as the same static member (the instance id kept in
// job.data_dir/instance-id): Kafka replaces the dead member by its
// instance id (KIP-345) instead of waiting out its session (30 s here), so
// the dead member is gone from the group as soon as slot 0 is owned again,
// by the restarted member (kfake, like Kafka, rebalances: the restarted
// member's cooperative subscription claims nothing, so the slot may also go
// to the standby; either loads at once). Exactly once.
func TestKilledOwnerRestartedRejoinsAsTheSameStaticMember(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 3, 1)
	e.session = "30s"
	a := e.start("a", "")
	e.ownership(map[*groupMember]int{a: 1})
	b := e.start("b", "")
	e.waitUntil("b in the group as a standby", func() bool { return b.assigns > 0 })
	e.produce(30)
	e.waitAllDecided()
	owner := ownerOf(e.kc.GroupInfo(e.groupName()), 0)
	if owner == nil || owner.InstanceID == nil || *owner.InstanceID != memberClientID("a") {
		t.Fatalf("slot 0 owner %+v, want the static member of a's instance id %s", owner, memberClientID("a"))
	}
	e.mu.Lock()
	a.mayFail = true
	e.mu.Unlock()
	a.killNow()
	if err := <-a.done; !errors.Is(err, errKilled) {
		t.Fatalf("a killed: %v", err)
	}
	if gi := e.kc.GroupInfo(e.groupName()); !hasMember(gi.Members, owner.MemberID) {
		t.Fatalf("the killed member %s left the group (%+v): a kill -9 must not leave", owner.MemberID, gi)
	}
	a2 := e.start("a", "") // same name: same job.data_dir, same instance id
	e.waitUntil("slot 0 owned again", func() bool { return len(a2.owned)+len(b.owned) == 1 })
	gi := e.kc.GroupInfo(e.groupName())
	if hasMember(gi.Members, owner.MemberID) {
		t.Errorf("the killed member %s is still in the group after its restart: the restart did not replace it by its "+
			"instance id (the slot would wait out kafka.session_timeout)", owner.MemberID)
	}
	var rejoined bool
	for _, m := range gi.Members {
		rejoined = rejoined || m.InstanceID != nil && *m.InstanceID == *owner.InstanceID && m.MemberID != owner.MemberID
	}
	if !rejoined || len(gi.Members) != 2 {
		t.Errorf("group members %+v, want the restarted instance %s (a new member id) and the standby", gi.Members, *owner.InstanceID)
	}
	t.Logf("slot 0 owned after the restart by a2 %v / b %v", a2.owned, b.owned)
	e.produce(30)
	e.waitAllDecided()
	for _, m := range []*groupMember{a2, b} {
		if err := e.stop(m); err != nil {
			t.Fatalf("%s: SIGTERM: %v", m.name, err)
		}
	}
	e.checkExactlyOnce()
}

// ownerOf is the member of gi holding slot-topic partition slot (nil:
// none).
func ownerOf(gi *kfake.GroupInfo, slot int32) *kfake.GroupMember {
	if gi == nil {
		return nil
	}
	for i, m := range gi.Members {
		if slices.Contains(m.Assignment[coordlog.SlotTopic(groupJob)], slot) {
			return &gi.Members[i]
		}
	}
	return nil
}

// Issue 22: a job run by the standalone path of job.slots 1 (no group:
// Build without a slot) resumes unchanged through the group path: the same
// scope 0 state record (no slot count recorded), checkpoint ids and labels
// continuing, its ledger still in job.data_dir itself (no slot-0
// directory); every record exactly once.
func TestStandaloneJobResumesThroughTheGroupPath(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 3, 1)
	path := e.writeConfig("a", "", "")
	cfg, err := config.Load(config.LoadOptions{File: path, Need: config.NeedRun})
	if err != nil {
		t.Fatal(err)
	}
	client, err := cmdutil.NewDorisClient(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	tap, w := newLogTap()
	defer w.Close()
	log, err := NewLogger(cfg.Log, w)
	if err != nil {
		t.Fatal(err)
	}
	job, err := Build(cfg, Deps{Doris: client, Logger: log, ConnectorOpts: []kafka.Opt{
		kafka.WithOnCheckpoint(func(s kafka.CheckpointStats) { logCheckpoint(log, s) })}})
	if err != nil {
		t.Fatal(err)
	}
	old := &groupMember{name: "standalone", tap: tap, owned: map[int]bool{}}
	e.mu.Lock()
	e.members = append(e.members, old)
	e.mu.Unlock()
	ran := make(chan error, 1)
	go func() { ran <- job.Connector.Run(context.Background()) }()
	e.produce(30)
	e.waitAllDecided()
	job.Connector.Drain()
	if err := <-ran; err != nil {
		t.Fatalf("standalone run: %v", err)
	}
	ctx := context.Background()
	opts := kafka.ClientOpts(kafka.Config{Brokers: e.kc.ListenAddrs()})
	sn, err := coordlog.ReadSnapshot(ctx, groupJob, opts)
	if err != nil {
		t.Fatal(err)
	}
	st1, _, _, err := sn.StateOf(coordlog.DefaultScope)
	if err != nil || st1.Decided == nil {
		t.Fatalf("standalone state: %+v %v", st1, err)
	}
	data := filepath.Join(e.dir, "data-a")
	entries1, _, err := ledger.ReadFile(data)
	if err != nil || len(entries1) == 0 {
		t.Fatalf("standalone ledger in %s: %d entries, %v", data, len(entries1), err)
	}

	a := e.run("a", path, nil) // the group path, same config
	e.ownership(map[*groupMember]int{a: 1})
	e.produce(30)
	e.waitAllDecided()
	if err := e.stop(a); err != nil {
		t.Fatalf("group path: %v", err)
	}
	e.checkExactlyOnce()
	sn, err = coordlog.ReadSnapshot(ctx, groupJob, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sc := sn.Scopes(); len(sc) != 1 || sc[0] != coordlog.DefaultScope {
		t.Errorf("state scopes %v, want only %s", sc, coordlog.DefaultScope)
	}
	st2, src, _, err := sn.StateOf(coordlog.DefaultScope)
	if err != nil || st2.Decided == nil || st2.Decided.ID <= st1.Decided.ID || !st2.Decided.Committed {
		t.Fatalf("state after the group path: %+v %v, want decisions continuing after checkpoint %d", st2, err, st1.Decided.ID)
	}
	if src.Slots != 0 {
		t.Errorf("state record holds slots %d, want none recorded (a one-slot record stays as the standalone one)", src.Slots)
	}
	if want := st1.Decided.Label; !strings.HasPrefix(st2.Decided.Label, strings.TrimSuffix(want, strconv.FormatUint(st1.Decided.ID, 10))) {
		t.Errorf("label %s after the group path, want the standalone labels' scope continued (%s)", st2.Decided.Label, want)
	}
	entries2, _, err := ledger.ReadFile(data)
	if err != nil || len(entries2) <= len(entries1) {
		t.Errorf("ledger in %s: %d entries after the group path, %d before (%v): want it continued there", data,
			len(entries2), len(entries1), err)
	}
	if _, err := os.Stat(filepath.Join(data, "slot-0")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("slot-0 directory in job.data_dir (%v): slot 0 of a one-slot job keeps its ledger in job.data_dir", err)
	}
}

// The instance id of a member without job.instance is created once in
// job.data_dir/instance-id (durably: no temporary file left) and read back
// by every later start; a second process on the same job.data_dir is
// refused at once naming the directory, the holder and the fix; distinct
// explicit job.instance values share a job.data_dir, the same one twice is
// refused.
func TestInstanceIDKeptInDataDirAndDataDirLocked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := &config.Config{}
	cfg.Job.DataDir = dir
	first, err := claimInstance(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.ID, instanceIDPrefix) || config.InstanceIDProblem(first.ID) != "" || first.Explicit {
		t.Fatalf("created instance id %q (explicit %v), want a valid generated id", first.ID, first.Explicit)
	}
	b, err := os.ReadFile(filepath.Join(dir, InstanceIDFile))
	host, _ := os.Hostname()
	if err != nil || string(b) != first.ID+"\nhost "+host+"\ndir "+dir+"\n" || first.Moved != "" {
		t.Fatalf("%s: %q %v (moved %q), want %q bound to this host and %s", InstanceIDFile, b, err, first.Moved, first.ID, dir)
	}
	if names, _ := filepath.Glob(filepath.Join(dir, InstanceIDFile+".tmp*")); len(names) != 0 {
		t.Errorf("temporary files left: %v", names)
	}
	_, err = claimInstance(cfg)
	var inUse *DataDirInUseError
	if !errors.As(err, &inUse) || inUse.Dir != dir || !strings.Contains(inUse.Holder, "pid "+strconv.Itoa(os.Getpid())) ||
		!strings.Contains(err.Error(), "its own job.data_dir") {
		t.Fatalf("second process on %s: %v, want a *DataDirInUseError naming the directory, the holder's pid and the fix", dir, err)
	}
	// Explicit, distinct instances share the directory, even with the
	// default one held; the same explicit one twice is refused.
	for _, inst := range []string{"m1", "m2"} {
		c := *cfg
		c.Job.Instance = inst
		mi, err := claimInstance(&c)
		if err != nil || mi.ID != inst || !mi.Explicit {
			t.Fatalf("job.instance %s: %+v %v", inst, mi, err)
		}
		defer mi.Release()
	}
	c := *cfg
	c.Job.Instance = "m1"
	if _, err := claimInstance(&c); !errors.As(err, &inUse) || inUse.Instance != "m1" {
		t.Errorf("job.instance m1 twice on one job.data_dir: %v, want *DataDirInUseError naming it", err)
	}
	first.Release()
	again, err := claimInstance(cfg)
	if err != nil || again.ID != first.ID {
		t.Fatalf("restart: instance %+v %v, want %s again", again, err, first.ID)
	}
	again.Release()
}

// An instance-id file that is not a valid Kafka group.instance.id (edited,
// truncated, emptied) is refused naming the file and the fix; the member
// never invents another id (it would join as another member).
func TestInstanceIDFileCorruptRefused(t *testing.T) {
	t.Parallel()
	for _, content := range []string{"", "\n", "host 1\n", "a/b", strings.Repeat("x", 250)} {
		dir := t.TempDir()
		path := filepath.Join(dir, InstanceIDFile)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := &config.Config{}
		cfg.Job.DataDir = dir
		_, err := claimInstance(cfg)
		var bad *InstanceIDFileError
		if !errors.As(err, &bad) || bad.Path != path || !strings.Contains(err.Error(), "delete it") {
			t.Errorf("instance-id %q: %v, want *InstanceIDFileError naming %s and the fix", content, err, path)
			continue
		}
		// The lock was released with the refusal: a fixed file starts.
		if err := os.WriteFile(path, []byte("fixed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		mi, err := claimInstance(cfg)
		if err != nil || mi.ID != "fixed" {
			t.Errorf("after the fix: %+v %v", mi, err)
			continue
		}
		mi.Release()
	}
}

// A job.data_dir copied to another directory or host (a restored backup,
// a volume mounted on a second machine) keeps no id of the original: the
// copy takes a new id and says so, so the two processes never share one
// static membership (each join would fence the other's for ever); the
// original keeps its id. A hand-written file of the id alone is kept.
func TestInstanceIDOfACopiedDataDirIsNew(t *testing.T) {
	t.Parallel()
	orig := t.TempDir()
	cfg := &config.Config{}
	cfg.Job.DataDir = orig
	first, err := claimInstance(cfg)
	if err != nil {
		t.Fatal(err)
	}
	first.Release()
	b, err := os.ReadFile(filepath.Join(orig, InstanceIDFile))
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := strings.Replace(string(b), "host ", "host other-", 1)
	for name, content := range map[string]string{"another directory": string(b), "another host": elsewhere} {
		dir := t.TempDir()
		if name == "another host" {
			// The same directory as the file names, on another host.
			content = strings.Replace(content, "dir "+orig, "dir "+dir, 1)
		}
		if err := os.WriteFile(filepath.Join(dir, InstanceIDFile), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		c := *cfg
		c.Job.DataDir = dir
		cp, err := claimInstance(&c)
		if err != nil {
			t.Fatal(err)
		}
		if cp.ID == first.ID || config.InstanceIDProblem(cp.ID) != "" || !strings.Contains(cp.Moved, first.ID) {
			t.Errorf("%s: copy joins as %q (moved %q), want a new id and the old binding named", name, cp.ID, cp.Moved)
		}
		cp.Release()
		again, err := claimInstance(&c)
		if err != nil || again.ID != cp.ID || again.Moved != "" {
			t.Errorf("%s: the copy's restart: %+v %v, want its new id %s kept", name, again, err, cp.ID)
		}
		if again != nil {
			again.Release()
		}
	}
	back, err := claimInstance(cfg)
	if err != nil || back.ID != first.ID || back.Moved != "" {
		t.Fatalf("original after the copies: %+v %v, want %s", back, err, first.ID)
	}
	back.Release()
	hand := t.TempDir()
	if err := os.WriteFile(filepath.Join(hand, InstanceIDFile), []byte("my-member\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := *cfg
	c.Job.DataDir = hand
	mi, err := claimInstance(&c)
	if err != nil || mi.ID != "my-member" || mi.Moved != "" {
		t.Fatalf("hand-written id: %+v %v", mi, err)
	}
	mi.Release()
}
