#!/bin/sh
# A tool, not the broker: its own small heap (not the broker's KAFKA_HEAP_OPTS), quick to start.
KAFKA_HEAP_OPTS="${KAFKA_TOOLS_HEAP_OPTS:--Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1}" \
  KAFKA_LOG4J_CONFIG="${KAFKA_LOG4J_CONFIG:-/opt/kafka/config/tools-log4j2.yaml}" \
  exec /opt/kafka/bin/kafka-run-class.sh org.apache.kafka.tools.TopicCommand "$@"
