#!/bin/sh
KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xmx256m} KAFKA_LOG4J_CONFIG=${KAFKA_LOG4J_CONFIG:-/opt/kafka/config/tools-log4j2.yaml} exec /opt/kafka/bin/kafka-run-class.sh org.apache.kafka.tools.BrokerApiVersionsCommand "$@"
