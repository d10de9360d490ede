package dev

import (
	"fmt"
	"net"
	"strings"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// printHuman prints the endpoints and copy-paste examples.
func printHuman(o *Options, ep Endpoints) error {
	kv := cmdutil.NewKV(o.IO)
	kv.Add("Doris FE (HTTP)", ep.FE)
	if len(ep.BEs) > 1 {
		kv.Add("Doris BEs (HTTP)", strings.Join(ep.BEs, " "))
	} else {
		kv.Add("Doris BE (HTTP)", ep.BE)
	}
	kv.Add("Doris MySQL", ep.MySQL)
	kv.Add("Emulator admin", ep.Admin)
	if ep.AdminToken != "" {
		kv.Add("Admin token", ep.AdminToken+" (send Authorization: Bearer <token>)")
	}
	kv.Add("Kafka", ep.Kafka)
	if ep.SchemaRegistry != "" {
		kv.Add("Schema Registry", ep.SchemaRegistry)
	}
	kv.Add("User", ep.User+" (password "+passwordNote(o)+")")
	kv.Add("Database", ep.Database)
	if err := kv.Render(); err != nil {
		return err
	}
	host, port, _ := net.SplitHostPort(ep.MySQL)
	auth := ep.User + ":"
	pflag := ""
	if o.Password != "" {
		auth = ep.User + ":<password>"
		pflag = " -p"
	}
	table := SampleTable
	_, err := fmt.Fprintf(o.IO.Out, `
Try it (Ctrl-C stops everything):

  # a two-phase-commit Stream Load: the answer's TxnId is PRECOMMITTED
  printf '{"order_id":1,"status":"new","amount":9.5}\n' > data.json
  curl --location-trusted -u %[1]s -H "Expect:100-continue" -H "label:demo-1" \
       -H "two_phase_commit:true" -H "format:json" -H "read_json_by_line:true" \
       -T data.json %[2]s/api/%[3]s/%[4]s/_stream_load

  # commit it by txn id (or -H "label:demo-1" instead of txn_id)
  curl --location-trusted -u %[1]s -X PUT -H "txn_id:<TxnId>" -H "txn_operation:commit" \
       %[2]s/api/%[3]s/_stream_load_2pc

  # query it
  mysql -h %[5]s -P %[6]s -u%[7]s%[8]s -e "SELECT * FROM %[3]s.%[4]s; SHOW TRANSACTION FROM %[3]s WHERE label = 'demo-1'"

  # the same through doris-sink
  doris-sink label status demo-1 --db %[3]s --fe %[2]s --mysql %[9]s
  doris-sink txn commit <TxnId> --db %[3]s --fe %[2]s --mysql %[9]s --yes

  # Kafka
  export DORIS_SINK_KAFKA__BROKERS=%[10]s
`, auth, ep.FE, ep.Database, table, host, port, ep.User, pflag, ep.MySQL, ep.Kafka)
	if err != nil || ep.SchemaRegistry == "" {
		return err
	}
	_, err = fmt.Fprintf(o.IO.Out, `
  # Avro through the Schema Registry (Confluent wire format; or FORMAT=protobuf, json_schema)
  export DORIS_SINK_RECORDS__FORMAT=avro DORIS_SINK_RECORDS__SCHEMA_REGISTRY__URLS=%[1]s
  curl -s %[1]s/subjects
`, ep.SchemaRegistry)
	return err
}

func passwordNote(o *Options) string {
	switch {
	case o.Password == "":
		return "empty"
	case o.passwordFromEnv:
		return "from " + PasswordEnv
	}
	return "from --password-file"
}
