#!/usr/bin/env bash
# Registers the BE with the FE, creates demo.orders and the Kafka topic.
# Needs a mysql client on the host (Doris speaks the MySQL protocol on 9030).
set -euo pipefail
until mysql -h127.0.0.1 -P9030 -uroot -e 'SELECT 1' >/dev/null 2>&1; do echo "waiting for the FE"; sleep 2; done
mysql -h127.0.0.1 -P9030 -uroot -e "ALTER SYSTEM ADD BACKEND '172.30.80.3:9050'" || true
mysql -h127.0.0.1 -P9030 -uroot <<'SQL'
CREATE DATABASE IF NOT EXISTS demo;
CREATE TABLE IF NOT EXISTS demo.orders (order_id BIGINT, op_version BIGINT, status VARCHAR(16), amount DECIMAL(12,2))
UNIQUE KEY(order_id) DISTRIBUTED BY HASH(order_id) BUCKETS 4
PROPERTIES ("replication_num" = "1", "enable_unique_key_merge_on_write" = "true", "function_column.sequence_col" = "op_version");
SQL
docker compose exec kafka /opt/kafka/bin/kafka-topics.sh --bootstrap-server kafka:9092 --create --if-not-exists --topic orders --partitions 3
echo 'produce: docker compose exec -T kafka /opt/kafka/bin/kafka-console-producer.sh --bootstrap-server kafka:9092 --topic orders'
