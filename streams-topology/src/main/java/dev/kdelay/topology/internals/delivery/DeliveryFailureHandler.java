package dev.kdelay.topology.internals.delivery;

import dev.kdelay.schemas.LogValues;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProductionExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka Streams' production exception handler in kdelay: a record the producer refused, and which
 * the {@link RescuingProducer} could not rescue, is remembered in the {@link DeliveryQuarantine}
 * (where the watched producer has reported it already), and the stream thread fails at once.
 *
 * <p>Failing is the only honest answer under exactly-once: the refusal has already made the
 * producer's transaction abortable, so going on would only lose more work at the commit. The stream
 * thread is replaced, the aborted work runs again, and this time the quarantined record is replaced
 * by a dead letter, so one refused record costs one failed transaction, not a loop.
 *
 * <p>An error that says nothing of the record but of a passing state of the cluster (a {@link
 * RetriableException}: a send that timed out waiting for metadata, a partition short of in-sync
 * replicas past the producer's retries) is retried as Kafka Streams' own handler does: the thread's
 * tasks are closed and revived from their changelogs, the transaction aborted, and the work runs
 * again. The thread is not replaced, so a broker that stays away for a while does not count against
 * the instance's limit of thread failures.
 *
 * <p>Set up by {@link #install}; it runs on producer I/O threads (errors the broker returned) and
 * on stream threads (errors the producer raised in {@code send}).
 */
public final class DeliveryFailureHandler implements ProductionExceptionHandler {

  private static final Logger log = LoggerFactory.getLogger(DeliveryFailureHandler.class);

  /** The key under which {@link #install} hands the quarantine to the handler. */
  public static final String CONFIG = "kdelay.delivery.quarantine";

  private DeliveryQuarantine quarantine;

  /**
   * Sets Kafka Streams up to report refused records to {@code quarantine}: this class as the
   * production exception handler, and the quarantine for it to find.
   *
   * @param streamsProperties the properties {@code KafkaStreams} is created with
   */
  public static void install(Properties streamsProperties, DeliveryQuarantine quarantine) {
    streamsProperties.put(
        StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG, DeliveryFailureHandler.class);
    streamsProperties.put(CONFIG, quarantine);
  }

  @Override
  public void configure(Map<String, ?> configs) {
    Object configured = configs.get(CONFIG);
    if (!(configured instanceof DeliveryQuarantine given)) {
      throw new ConfigException(
          CONFIG,
          configured,
          "must be the DeliveryQuarantine of this KafkaStreams instance; use"
              + " DeliveryFailureHandler.install(properties, quarantine)");
    }
    this.quarantine = given;
  }

  @Override
  public Response handleError(
      ErrorHandlerContext context, ProducerRecord<byte[], byte[]> record, Exception exception) {
    // A watched producer (RescuingProducer) reported it already; this is the one Kafka
    // Streams hears of, recorded here when nothing watches the producer.
    if (exception instanceof RetriableException) {
      log.warn(
          "event=record-send-failed topic={} error={} response=retry",
          LogValues.quote(record.topic()),
          LogValues.quote(DeliveryQuarantine.describe(exception)));
      return Response.retry();
    }
    boolean recordedNow = quarantine.recordRefused(record, exception);
    log.error(
        "event=record-refused topic={} error={} response=fail{}",
        LogValues.quote(record.topic()),
        LogValues.quote(DeliveryQuarantine.describe(exception)),
        recordedNow ? " quarantined=true" : "");
    return Response.fail();
  }
}
