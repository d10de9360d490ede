package root

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// repoFile returns the path of a file of the repository from this package.
func repoFile(p string) string { return filepath.Join("..", "..", "..", "..", filepath.FromSlash(p)) }

func readRepoFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(repoFile(p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dockerInstr is one Dockerfile instruction: its keyword and arguments,
// continuation lines joined.
type dockerInstr struct{ op, args string }

func parseDockerfile(t *testing.T, text string) []dockerInstr {
	t.Helper()
	var out []dockerInstr
	var cur strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if s, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(line)
		op, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, dockerInstr{strings.ToUpper(op), strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// goBuildFlags returns the environment and flags of a `go build` command
// line (the -o argument and the package excluded) and its package.
func goBuildFlags(t *testing.T, line string) (flags []string, pkg string) {
	t.Helper()
	f := strings.Fields(line)
	i := slices.Index(f, "go")
	if i < 0 || i+1 >= len(f) || f[i+1] != "build" {
		t.Fatalf("%q is not a go build line", line)
	}
	for _, e := range f[:i] {
		if strings.Contains(e, "=") {
			flags = append(flags, e)
		}
	}
	for j := i + 2; j < len(f); j++ {
		switch {
		case f[j] == "-o" || f[j] == "-ldflags":
			j++ // its value: the output path and version stamp differ by design
		case strings.HasPrefix(f[j], "-"):
			flags = append(flags, f[j])
			if f[j] == "-tags" {
				j++
				flags = append(flags, f[j])
			}
		default:
			pkg = f[j]
		}
	}
	slices.Sort(flags)
	return flags, pkg
}

// Issue 30: the one Dockerfile (CI has no container engine to build it)
// builds the static nodev binary with the flags .ci/run builds it with, in
// a build stage; its runtime stage is distroless or scratch, runs as a
// non-root user and has doris-sink as its ENTRYPOINT. The compose example
// builds it (no second recipe).
func TestDockerfile(t *testing.T) {
	t.Parallel()
	ins := parseDockerfile(t, readRepoFile(t, "Dockerfile"))
	var stages []string
	var build string
	final := map[string]string{}
	for _, in := range ins {
		switch in.op {
		case "FROM":
			stages = append(stages, in.args)
			clear(final)
		case "RUN":
			if strings.Contains(in.args, "go build") {
				build = in.args
			}
		}
		final[in.op] = in.args
		if in.op == "COPY" && strings.Contains(in.args, "/usr/local/bin/doris-sink") {
			final["COPY binary"] = in.args
		}
	}
	if len(stages) < 2 || !strings.HasPrefix(stages[0], "golang:") || !strings.HasSuffix(stages[0], " AS build") {
		t.Fatalf("stages %q: want a golang build stage, then the runtime stage", stages)
	}
	if base := stages[len(stages)-1]; !strings.HasPrefix(base, "gcr.io/distroless/static") && base != "scratch" {
		t.Errorf("runtime stage FROM %s: want distroless static or scratch", base)
	}
	flags, pkg := goBuildFlags(t, build)
	if !slices.Contains(flags, "CGO_ENABLED=0") || !slices.Contains(flags, "nodev") || pkg != "./cmd/doris-sink" {
		t.Errorf("Dockerfile build %q: want CGO_ENABLED=0 go build -tags nodev ./cmd/doris-sink", build)
	}
	var ciBuild string
	for _, l := range strings.Split(readRepoFile(t, ".ci/run"), "\n") {
		if strings.Contains(l, "go build -tags nodev") && !strings.HasPrefix(strings.TrimSpace(l), "#") {
			ciBuild = l
		}
	}
	if ciFlags, ciPkg := goBuildFlags(t, ciBuild); !slices.Equal(ciFlags, flags) || ciPkg != pkg {
		t.Errorf(".ci/run builds %v %s, the Dockerfile %v %s: CI must build the image's binary", ciFlags, ciPkg, flags, pkg)
	}
	user := final["USER"]
	if uid, _, _ := strings.Cut(user, ":"); user == "" || uid == "root" || uid == "0" {
		t.Errorf("runtime USER %q: want a non-root user", user)
	}
	if final["ENTRYPOINT"] != `["/usr/local/bin/doris-sink"]` || !strings.HasPrefix(final["COPY binary"], "--from=build ") {
		t.Errorf("runtime ENTRYPOINT %q, binary %q: want the doris-sink binary of the build stage", final["ENTRYPOINT"], final["COPY binary"])
	}
	if _, err := os.Stat(repoFile("examples/compose/Dockerfile")); !errors.Is(err, os.ErrNotExist) {
		t.Error("examples/compose/Dockerfile exists: one image recipe, the root Dockerfile")
	}
	if !regexp.MustCompile(`(?m)^\s+dockerfile: Dockerfile\b`).MatchString(readRepoFile(t, "examples/compose/docker-compose.yml")) {
		t.Error("examples/compose/docker-compose.yml does not build the root Dockerfile")
	}
}

// checkArgs fails unless args is a doris-sink command line every flag of
// which exists (parsed by the real command tree).
func checkArgs(t *testing.T, where string, args []string) {
	t.Helper()
	f, _, _ := cmdutil.NewTestFactory(false)
	c, rest, err := NewCmdRoot(f).Find(args)
	if err != nil || c.Name() != "run" {
		t.Fatalf("%s: %v is not `doris-sink run`: %v", where, args, err)
	}
	if err := c.ParseFlags(rest); err != nil {
		t.Fatalf("%s: %v: %v", where, args, err)
	}
}

// loadDeployConfig loads a job the way an example starts it: the file, the
// environment it sets; password files are checked to be where a mount
// puts them (mounts), not read.
func loadDeployConfig(t *testing.T, where, yamlText string, env []string, need config.Need, mounts ...string) *config.Config {
	t.Helper()
	o := config.LoadOptions{Environ: func() []string { return env }, Need: need, ReadFile: func(p string) ([]byte, error) {
		for _, m := range mounts {
			if p == m {
				return []byte("secret"), nil
			}
		}
		return nil, fmt.Errorf("%s is not a file the example mounts (%v)", p, mounts)
	}}
	if yamlText != "" {
		o.File = filepath.Join(t.TempDir(), "job.yaml")
		if err := os.WriteFile(o.File, []byte(yamlText), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(o)
	if err != nil {
		t.Fatalf("%s: the job config does not load: %v", where, err)
	}
	return cfg
}

// k8sObjects decodes a multi-document manifest.
func k8sObjects(t *testing.T, text string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var o map[string]any
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out[o["kind"].(string)] = o
	}
	return out
}

// dig walks m by keys (a number indexes a list).
func dig(t *testing.T, m any, keys ...any) any {
	t.Helper()
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			mm, ok := m.(map[string]any)
			if !ok {
				t.Fatalf("no %q in %v", k, m)
			}
			m = mm[k]
		case int:
			l, ok := m.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("no item %d in %v", k, m)
			}
			m = l[k]
		}
	}
	return m
}

// Issue 30: the Kubernetes example's job config, with the environment its
// pods set (job.instance from the pod name), loads as `run` needs it;
// its args are a real `doris-sink run` command line; the password comes
// from the Secret mounted where doris.password_file names it; the probes
// are /healthz and /readyz on metrics.listen's port; the grace period
// exceeds the drain bound (kafka.rebalance_timeout in group mode); logs
// are JSON.
func TestKubernetesExample(t *testing.T) {
	t.Parallel()
	objs := k8sObjects(t, readRepoFile(t, "examples/deploy/kubernetes/doris-sink.yaml"))
	sts := objs["StatefulSet"]
	pod := dig(t, sts, "spec", "template", "spec")
	ctr := dig(t, pod, "containers", 0)
	var env []string
	for _, e := range dig(t, ctr, "env").([]any) {
		e := e.(map[string]any)
		v, ok := e["value"].(string)
		if ref, isRef := e["valueFrom"]; isRef {
			if dig(t, ref, "fieldRef", "fieldPath") != "metadata.name" {
				t.Fatalf("env %v: only the pod name is expected from the downward API", e)
			}
			v, ok = dig(t, sts, "metadata", "name").(string)+"-0", true
		}
		if !ok {
			t.Fatalf("env %v has no value", e)
		}
		env = append(env, e["name"].(string)+"="+v)
	}
	var secretFiles []string
	var configFile string
	volumes := map[string]any{}
	for _, v := range dig(t, pod, "volumes").([]any) {
		volumes[v.(map[string]any)["name"].(string)] = v
	}
	for _, m := range dig(t, ctr, "volumeMounts").([]any) {
		m := m.(map[string]any)
		v, ok := volumes[m["name"].(string)].(map[string]any)
		if !ok {
			continue // a volumeClaimTemplate
		}
		if s, ok := v["secret"]; ok {
			for _, it := range dig(t, s, "items").([]any) {
				secretFiles = append(secretFiles, path.Join(m["mountPath"].(string), it.(map[string]any)["path"].(string)))
			}
		}
		if _, ok := v["configMap"]; ok {
			configFile = path.Join(m["mountPath"].(string), "job.yaml")
		}
	}
	var args []string
	for _, a := range dig(t, ctr, "args").([]any) {
		args = append(args, a.(string))
	}
	checkArgs(t, "kubernetes", args)
	if i := slices.Index(args, "-c"); i < 0 || args[i+1] != configFile {
		t.Errorf("args %v: want -c %s, the ConfigMap's job.yaml as mounted", args, configFile)
	}
	cfg := loadDeployConfig(t, "kubernetes", dig(t, objs["ConfigMap"], "data", "job.yaml").(string), env, config.NeedRun, secretFiles...)
	if cfg.Job.Slots < 2 || cfg.Job.Instance != "doris-sink-orders-0" || cfg.Doris.PasswordFile == "" || cfg.Log.Format != "json" {
		t.Errorf("config: slots %d instance %q password_file %q log.format %q: want group mode, the pod name, a Secret file, JSON logs",
			cfg.Job.Slots, cfg.Job.Instance, cfg.Doris.PasswordFile, cfg.Log.Format)
	}
	_, port, err := net.SplitHostPort(cfg.Metrics.Listen)
	if err != nil {
		t.Fatal(err)
	}
	if cp := dig(t, ctr, "ports", 0, "containerPort"); fmt.Sprint(cp) != port {
		t.Errorf("containerPort %v, metrics.listen %s", cp, cfg.Metrics.Listen)
	}
	if p := dig(t, ctr, "livenessProbe", "httpGet", "path"); p != "/healthz" {
		t.Errorf("liveness on %v, want /healthz", p)
	}
	if p := dig(t, ctr, "readinessProbe", "httpGet", "path"); p != "/readyz" {
		t.Errorf("readiness on %v, want /readyz", p)
	}
	grace := time.Duration(dig(t, pod, "terminationGracePeriodSeconds").(int)) * time.Second
	if grace <= cfg.Kafka.RebalanceTimeout {
		t.Errorf("terminationGracePeriodSeconds %v: want more than the drain bound kafka.rebalance_timeout %v", grace, cfg.Kafka.RebalanceTimeout)
	}
	if uid := dig(t, pod, "securityContext", "runAsUser"); uid == 0 {
		t.Error("the pod runs as root")
	}
}

// Issue 30: the systemd unit restarts on failure but not on a config
// error, stops with SIGTERM (the drain) and waits longer than a standalone
// drain can take before SIGKILL; its ExecStart is a real command line and
// its environment only known keys, the password from a credential file.
func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	text := readRepoFile(t, "examples/deploy/systemd/doris-sink@.service")
	const instance, creds = "orders-eos", "/run/credentials/doris-sink@orders-eos.service"
	spec := strings.NewReplacer("%i", instance, "%d", creds)
	unit := map[string][]string{}
	for _, l := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
			unit[k] = append(unit[k], spec.Replace(v))
		}
	}
	one := func(k string) string {
		if len(unit[k]) != 1 {
			t.Fatalf("%s set %d times", k, len(unit[k]))
		}
		return unit[k][0]
	}
	if one("Restart") != "on-failure" || one("KillSignal") != "SIGTERM" || one("RestartPreventExitStatus") != strconv.Itoa(cmdutil.ExitConfig) {
		t.Errorf("Restart %s KillSignal %s RestartPreventExitStatus %s: want on-failure, SIGTERM, %d",
			one("Restart"), one("KillSignal"), one("RestartPreventExitStatus"), cmdutil.ExitConfig)
	}
	exec := strings.Fields(one("ExecStart"))
	if exec[0] != "/usr/local/bin/doris-sink" {
		t.Errorf("ExecStart %v", exec)
	}
	checkArgs(t, "systemd", exec[1:])
	env := unit["Environment"]
	cred, _, _ := strings.Cut(one("LoadCredential"), ":")
	cfg := loadDeployConfig(t, "systemd", "", env, 0, path.Join(creds, cred))
	if cfg.Doris.PasswordFile != path.Join(creds, cred) || cfg.Log.Format != "json" || cfg.Job.DataDir != "/var/lib/doris-sink/"+instance {
		t.Errorf("environment: password_file %q log.format %q data_dir %q", cfg.Doris.PasswordFile, cfg.Log.Format, cfg.Job.DataDir)
	}
	if sd := one("StateDirectory"); "/var/lib/"+sd != cfg.Job.DataDir {
		t.Errorf("StateDirectory %s and job.data_dir %s differ", sd, cfg.Job.DataDir)
	}
	stop, err := time.ParseDuration(one("TimeoutStopSec") + "s")
	if err != nil {
		t.Fatal(err)
	}
	// docs/operations.md "Signals": checkpoint_interval plus a commit, and
	// up to 2 minutes more for a drain to retry its checkpoint.
	if bound := cfg.Delivery.CheckpointInterval + 2*time.Minute; stop <= bound {
		t.Errorf("TimeoutStopSec %v: want more than the drain bound %v", stop, bound)
	}
	if !bytes.Contains([]byte(text), []byte("second SIGTERM")) {
		t.Error("the unit does not say what a second SIGTERM does")
	}
}
