package config

import (
	"fmt"
	"strings"
)

// kcRegistryConverters maps the Confluent converters of Kafka Connect's
// value.converter to the registry formats (the Doris Kafka connector reads
// Avro and Protobuf through them, apache/doris-kafka-connector PR #32).
var kcRegistryConverters = map[string]string{
	"io.confluent.connect.avro.AvroConverter":         RecordsAvro,
	"io.confluent.connect.protobuf.ProtobufConverter": RecordsProtobuf,
	"io.confluent.connect.json.JsonSchemaConverter":   RecordsJSONSchema,
}

// kcRegistry takes value.converter and its registry settings: a Confluent
// converter sets records.format and the registry keys; any other converter
// is ignored with a warning, as are its settings (the ignoredKCPrefixes
// loop). It returns the registry format set ("" for none).
func kcRegistry(take func(string) (string, bool)) (sets []kcSet, format string, warnings []string) {
	conv, ok := take("value.converter")
	if !ok {
		return nil, "", nil
	}
	format, ok = kcRegistryConverters[conv]
	if !ok {
		return nil, "", []string{fmt.Sprintf("value.converter: Kafka connector option ignored: records are read as bytes; records.format says how values are parsed (%s is not a Schema Registry converter)", conv)}
	}
	sets = append(sets, kcSet{"records.format", "value.converter", format})
	if v, ok := take("value.converter.schema.registry.url"); ok {
		sets = append(sets, kcSet{"records.schema_registry.urls", "value.converter.schema.registry.url", splitList(v)})
	}
	if v, ok := take("value.converter.basic.auth.user.info"); ok {
		user, pass, _ := strings.Cut(v, ":")
		sets = append(sets, kcSet{"records.schema_registry.username", "value.converter.basic.auth.user.info", user},
			kcSet{"records.schema_registry.password", "value.converter.basic.auth.user.info", pass})
	}
	if v, ok := take("value.converter.bearer.auth.token"); ok {
		sets = append(sets, kcSet{"records.schema_registry.bearer", "value.converter.bearer.auth.token", v})
	}
	if v, ok := take("value.converter.json.fail.invalid.schema"); ok {
		sets = append(sets, kcSet{"records.json_schema.validate", "value.converter.json.fail.invalid.schema", v})
	}
	return sets, format, nil
}
