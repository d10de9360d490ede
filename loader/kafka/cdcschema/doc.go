// Package cdcschema turns the Kafka Connect schema of a Debezium change
// event (the "schema" block the JSON converter writes with
// value.converter.schemas.enable=true) into Doris columns and tables, and
// plans the schema evolution a changed event schema needs.
//
// The type mapping follows the Doris connectors (docs/configuration.md
// "Debezium types"): the Connect schema types and Debezium semantic names as
// the Doris Kafka connector maps them (apache/doris-kafka-connector
// converter/type/connect/*Type.java and converter/type/debezium/*Type.java,
// RecordTypeRegister), with the string lengths of the Doris Flink
// connector's whole-database sync (apache/doris-flink-connector
// tools/cdc/mysql/MysqlType.java: CHAR/VARCHAR(n) → VARCHAR(3·n) for UTF-8
// bytes, STRING when 3·n > 65533) and its key rule (catalog/doris/
// DorisSchemaFactory.java buildColumn: a STRING key column becomes
// VARCHAR(65533), as Doris refuses STRING keys).
//
// Nothing here runs per record: a Connector parses a schema only when the
// raw schema block of a topic changes.
package cdcschema
