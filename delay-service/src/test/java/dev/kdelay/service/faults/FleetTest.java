package dev.kdelay.service.faults;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class FleetTest {

  /** As {@code threadFailures()} put it together in the CI run that met it. */
  private static final String AFTER_END_TXN =
      """
      12:11:33.622 ERROR [a-StreamThread-1] KafkaStreams - stream-client [a] Replacing thread in the\
       streams uncaught exception handler
          12:11:33.611 ERROR [a-StreamThread-1] ReplaceThreadHandler - event=stream-thread-failed\
       thread=a-StreamThread-1 response=replace-thread
          org.apache.kafka.streams.errors.StreamsException: Error encountered trying to commit a\
       transaction [stream-thread [a-StreamThread-1]]
          Caused by: org.apache.kafka.common.KafkaException: Unhandled error in EndTxnResponse: The\
       server experienced an unexpected error when processing the request.""";

  @Test
  void shouldTellAThreadReplacedAfterABrokersFatalAnswerToATransactionRequest() {
    assertThat(Fleet.replacedAfterABrokersFatalAnswer(AFTER_END_TXN)).isTrue();
  }

  @Test
  void shouldNotExcuseAThreadThatDiedOfKdelaysOwnCode() {
    String ours =
        AFTER_END_TXN.replace(
            "Caused by: org.apache.kafka.common.KafkaException: Unhandled error in EndTxnResponse",
            "Caused by: java.lang.NullPointerException: Cannot invoke \"String.length()\"");

    assertThat(Fleet.replacedAfterABrokersFatalAnswer(ours)).isFalse();
  }

  @Test
  void shouldNotExcuseAnInstanceThatShutDownInsteadOfReplacingTheThread() {
    String shutDown =
        AFTER_END_TXN.replace(
            "Replacing thread in the streams uncaught exception handler",
            "Encountered the following exception during processing and the handler opted to"
                + " SHUTDOWN_CLIENT");

    assertThat(Fleet.replacedAfterABrokersFatalAnswer(shutDown)).isFalse();
  }
}
