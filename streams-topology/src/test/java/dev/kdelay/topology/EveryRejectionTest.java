package dev.kdelay.topology;

import static dev.kdelay.topology.DelayDriver.TARGET;
import static dev.kdelay.topology.DelayDriver.bytes;
import static dev.kdelay.topology.DelayDriver.header;
import static dev.kdelay.topology.DelayDriver.headerText;
import static dev.kdelay.topology.DelayDriver.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.schemas.RejectionReason;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One request per rejection code, through the whole topology; valid requests keep firing. */
class EveryRejectionTest {

  @TempDir Path stateDir;

  @Test
  void shouldDeadLetterEveryRejectionCodeWithItsRequestAndKeepFiring() {
    Map<String, Integer> topics = Map.of(TARGET, 2);
    try (DelayDriver delay =
        new DelayDriver(
            stateDir,
            Map.of(DelayConfig.MAX_PAYLOAD_BYTES_CONFIG, 100),
            TargetTopics.of(
                topic -> {
                  if (topic.equals("explodes")) {
                    throw new IllegalStateException("a bug in kdelay's topic cache");
                  }
                  return topics.containsKey(topic)
                      ? TargetTopic.present(topics.get(topic))
                      : TargetTopic.ABSENT;
                }))) {
      Header target = header(DelayHeaders.TARGET_TOPIC, TARGET);
      Header soon = header(DelayHeaders.AFTER, "1000");
      Map<RejectionReason, Runnable> requests = new LinkedHashMap<>();
      requests.put(
          RejectionReason.BAD_ID, () -> delay.request(null, bytes("v"), delay.now(), target, soon));
      requests.put(
          RejectionReason.UNKNOWN_ACTION,
          () -> delay.request("a", "v", target, soon, header(DelayHeaders.ACTION, "snooze")));
      requests.put(RejectionReason.MISSING_TARGET, () -> delay.request("b", "v", soon));
      requests.put(
          RejectionReason.BAD_TARGET,
          () -> delay.request("c", "v", header(DelayHeaders.TARGET_TOPIC, "no spaces"), soon));
      requests.put(
          RejectionReason.TARGET_NOT_ALLOWED,
          () ->
              delay.request(
                  "d", "v", header(DelayHeaders.TARGET_TOPIC, "__transaction_state"), soon));
      requests.put(
          RejectionReason.UNKNOWN_TOPIC,
          () -> delay.request("e", "v", header(DelayHeaders.TARGET_TOPIC, "missing"), soon));
      requests.put(
          RejectionReason.BAD_PARTITION,
          () -> delay.request("f", "v", target, soon, header(DelayHeaders.TARGET_PARTITION, "2")));
      requests.put(RejectionReason.MISSING_TIME, () -> delay.request("g", "v", target));
      requests.put(
          RejectionReason.BAD_TIME,
          () -> delay.request("h", "v", target, header(DelayHeaders.AFTER, "-PT1S")));
      requests.put(
          RejectionReason.CONFLICTING_TIMES,
          () -> delay.request("i", "v", target, soon, header(DelayHeaders.CRON, "* * * * * ?")));
      requests.put(
          RejectionReason.TOO_FAR,
          () ->
              delay.request(
                  "j", "v", target, header(DelayHeaders.FIRE_AT, "9999-01-01T00:00:00Z")));
      requests.put(
          RejectionReason.BAD_CRON,
          () -> delay.request("k", "v", target, header(DelayHeaders.CRON, "every day")));
      requests.put(
          RejectionReason.BAD_ZONE,
          () ->
              delay.request(
                  "l",
                  "v",
                  target,
                  header(DelayHeaders.CRON, "0 0 * * * ?"),
                  header(DelayHeaders.ZONE, "Mars/Olympus")));
      requests.put(
          RejectionReason.BAD_HEADER,
          () ->
              delay.request(
                  "m",
                  "v",
                  target,
                  soon,
                  new RecordHeader(DelayHeaders.AFTER, new byte[] {(byte) 0xff})));
      requests.put(
          RejectionReason.TOO_LARGE, () -> delay.request("n", "x".repeat(101), target, soon));
      requests.put(
          RejectionReason.NOT_APPLICABLE,
          () -> delay.request("o", null, header(DelayHeaders.ACTION, "resume")));
      requests.put(
          RejectionReason.SUPERSEDED,
          () -> {
            delay.request("p", null); // a cancel stamped now
            delay.request(bytes("p"), bytes("v"), delay.now().minusSeconds(1), target, soon);
          });
      requests.put(
          RejectionReason.IMPORT_REFUSED,
          () ->
              delay.request(
                  bytes("r"),
                  bytes("an entry"),
                  delay.now(),
                  header(DelayHeaders.IMPORT, "another-application")));
      requests.put(
          RejectionReason.INTERNAL,
          () -> delay.request("q", "v", header(DelayHeaders.TARGET_TOPIC, "explodes"), soon));

      // when: each bad request, with a valid one after each
      int valid = 0;
      for (Runnable request : requests.values()) {
        request.run();
        delay.request("valid-" + valid++, "ok", target, header(DelayHeaders.AFTER, "0"));
      }
      delay.advance(Duration.ofMillis(10));

      // then: every code, once, in order, with the request as it came
      List<TestRecord<byte[], byte[]>> dead = delay.deadLetters();
      assertThat(dead)
          .extracting(r -> RejectionReason.valueOf(headerText(r.headers(), DelayHeaders.ERROR)))
          .containsExactlyElementsOf(requests.keySet());
      Set<RejectionReason> uncovered =
          Arrays.stream(RejectionReason.values())
              .filter(reason -> !requests.containsKey(reason))
              .filter(reason -> reason != RejectionReason.UNREADABLE_TASK) // see UnreadableTaskTest
              .filter(reason -> reason != RejectionReason.UNDELIVERABLE) // see DeliverabilityTest
              // a tenant's, into its own dead-letter topic: see TenantsTest
              .filter(reason -> reason != RejectionReason.TOO_MANY_PENDING)
              .collect(Collectors.toSet());
      assertThat(uncovered).as("rejection codes this test does not provoke").isEmpty();
      assertThat(dead)
          .allSatisfy(
              r -> assertThat(headerText(r.headers(), DelayHeaders.ERROR_MESSAGE)).isNotBlank());
      assertThat(delay.fired())
          .hasSize(valid)
          .allSatisfy(r -> assertThat(text(r.value())).isEqualTo("ok"));
    }
  }
}
