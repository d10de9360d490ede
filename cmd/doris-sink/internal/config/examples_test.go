package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The shipped example configs (examples/configs, the compose job) load
// and validate as a run needs them.
func TestExampleConfigs(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"configs/orders-eos.yaml", "configs/flink-aliases.yaml", "configs/kafka-connect-aliases.yaml", "compose/doris-sink.yaml"} {
		c, err := Load(LoadOptions{File: filepath.Join("..", "..", "..", "..", "examples", filepath.FromSlash(name)), Need: NeedRun})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if c.Delivery.Guarantee != ExactlyOnce || c.Doris.Database != "demo" || c.Doris.Table != "orders" {
			t.Errorf("%s: %+v", name, c)
		}
	}
}

// docs/configuration.md lists every key, every Flink alias and every
// Kafka connector alias.
func TestConfigurationDocComplete(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, k := range Keys() {
		if !strings.Contains(doc, "| `"+k.Name+"` |") {
			t.Errorf("docs/configuration.md lacks key %s", k.Name)
		}
	}
	for _, a := range Aliases() {
		if !strings.Contains(doc, "| `"+a[0]+"` |") {
			t.Errorf("docs/configuration.md lacks alias %s", a[0])
		}
	}
	for _, a := range KafkaConnectAliases() {
		if !strings.Contains(doc, "| `"+a[0]+"` | "+a[1]+" | "+a[2]+" |") {
			t.Errorf("docs/configuration.md lacks the Kafka connector alias row of %s (or it is stale)", a[0])
		}
	}
}
