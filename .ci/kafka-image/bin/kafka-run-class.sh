#!/bin/sh
# kafka-run-class.sh CLASS ARGS...: Kafka's jars on the class path, logging to the console.
exec java ${KAFKA_HEAP_OPTS:--Xmx512m} ${KAFKA_OPTS:-} \
  -Dlog4j2.configurationFile="${KAFKA_LOG4J_CONFIG:-/opt/kafka/config/log4j2.yaml}" \
  -cp '/opt/kafka/libs/*' "$@"
