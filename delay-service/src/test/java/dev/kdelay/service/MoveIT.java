package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import dev.kdelay.service.TargetTopicReader.Received;
import dev.kdelay.service.cli.CommandLine;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.service.topics.TopicsTestConfig;
import dev.kdelay.topology.DelayConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Growing the partition count with {@code kdelay move}, end to end from the CLI: a deployment on
 * two partitions with one-shots due before, during and after the move, recurring and paused
 * schedules and cancels, stopped; a new deployment on six; the move; every task fires once, in one
 * deployment or the other, and every cancel holds, whether it was sent before the stop, to the old
 * requests topic after it, or to the new one before the move.
 */
@ExtendWith(KafkaClusterExtension.class)
@Tag("integration")
class MoveIT {

  private static final Duration TIMEOUT = Duration.ofMinutes(2);
  private static final String OLD = "move-old";
  private static final String NEW = "move-new";
  private static final String TARGET = "moved-target";
  private static final int DUE = 200;

  @TempDir Path oldState;
  @TempDir Path newState;

  @Test
  void shouldMoveEverySchedulePendingInAStoppedDeploymentToOneWithMorePartitions(
      KafkaTestCluster kafka) throws Exception {
    try (Admin admin =
            Admin.create(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()));
        KafkaProducer<String, String> producer = producer(kafka);
        TargetTopicReader fired = reader(kafka, admin)) {
      // given: the old deployment, on two partitions, with one-shots due from 10 s to 20 s from
      // now, a schedule every second, one paused, and twenty due in an hour, ten of them cancelled
      DelayService old =
          new DelayService(
              TopicsTestConfig.named(
                  kafka, OLD, oldState, Map.of(ServiceConfig.TOPIC_PARTITIONS_CONFIG, 2)));
      old.start(Optional.of(TIMEOUT));
      long scheduledAt = System.currentTimeMillis();
      for (int i = 0; i < DUE; i++) {
        send(producer, OLD, "due-" + i, "at", DelayHeaders.FIRE_AT, scheduledAt + 10_000 + 50 * i);
      }
      send(producer, OLD, "tick", "every second", DelayHeaders.CRON, "* * * * * ?");
      send(producer, OLD, "paused", "paused", DelayHeaders.CRON, "* * * * * ?");
      for (int i = 0; i < 20; i++) {
        send(producer, OLD, "far-" + i, "never", DelayHeaders.AFTER, "PT1H");
      }
      fired.pollUntil(received -> firedIds(received).contains("paused"), TIMEOUT);
      action(producer, OLD, "paused", "pause");
      for (int i = 0; i < 10; i++) {
        action(producer, OLD, "far-" + i, "cancel");
      }

      // when: a move while it runs
      Run refused = move(kafka);

      // then: refused, naming it
      assertThat(refused.code()).isEqualTo(CommandLine.FAILED);
      assertThat(refused.err()).contains("application '" + OLD + "' still runs");

      // given: it stopped after the first due tasks fired; requests still come to its topic
      fired.pollUntil(received -> firedIds(received).contains("due-0"), TIMEOUT);
      old.close();
      assertThat(old.state()).hasValue(org.apache.kafka.streams.KafkaStreams.State.NOT_RUNNING);
      long stoppedAt = System.currentTimeMillis();
      for (int i = 10; i < 15; i++) {
        action(producer, OLD, "far-" + i, "cancel");
      }
      send(producer, OLD, "arrived-late", "late", DelayHeaders.AFTER, "PT1S");

      // and: the new deployment, on six partitions, taking imports from the old; a cancel sent to
      // it before the move
      try (DelayService next =
          new DelayService(
              TopicsTestConfig.named(
                  kafka,
                  NEW,
                  newState,
                  Map.of(
                      ServiceConfig.TOPIC_PARTITIONS_CONFIG,
                      6,
                      DelayConfig.IMPORT_FROM_CONFIG,
                      OLD)))) {
        next.start(Optional.of(TIMEOUT));
        for (int i = 15; i < 20; i++) {
          action(producer, NEW, "far-" + i, "cancel");
        }

        // when: the move
        Run moved = move(kafka);
        long movedAt = System.currentTimeMillis();

        // then: every pending schedule and marker moved, and the requests sent after the stop
        assertThat(moved.code()).as(moved.err()).isEqualTo(CommandLine.OK);
        System.out.println("MOVE " + moved.out().replace('\n', ' '));
        assertThat(moved.out())
            .contains("Moving the schedules of application '" + OLD + "'")
            .contains("(6 partitions)")
            .contains("Forwarded 6 requests")
            .containsPattern("1[0-9] cancel or fire markers still in retention");
        assertThat(
                admin
                    .describeTopics(List.of(NEW + "-requests"))
                    .allTopicNames()
                    .get(30, TimeUnit.SECONDS)
                    .get(NEW + "-requests")
                    .partitions())
            .hasSize(6);

        // and: every due task fires once, in one deployment or the other
        List<Received> all =
            fired.pollUntil(
                received ->
                    firedIds(received).containsAll(dueIds())
                        && firedIds(received).contains("arrived-late")
                        && firedAfter(received, "tick", movedAt) >= 2,
                TIMEOUT);
        action(producer, NEW, "paused", "resume");
        long resumedAt = System.currentTimeMillis();
        all = fired.pollUntil(received -> firedAfter(received, "paused", resumedAt) >= 1, TIMEOUT);
        all = fired.drainCommitted(TIMEOUT);

        Map<String, Long> byKey =
            all.stream()
                .collect(
                    Collectors.groupingBy(
                        r -> header(r, DelayHeaders.IDEMPOTENCY_KEY), Collectors.counting()));
        assertThat(byKey)
            .as("fires per idempotency key")
            .allSatisfy((key, n) -> assertThat(n).isOne());
        Set<String> ids = firedIds(all);
        assertThat(ids).containsAll(dueIds()).contains("arrived-late", "tick", "paused");
        assertThat(ids).noneMatch(id -> id.startsWith("far-"));
        assertThat(firedAfter(all, "paused", stoppedAt))
            .as("the paused schedule fires again only once resumed in the new deployment")
            .isEqualTo(firedAfter(all, "paused", resumedAt));
        long dueDuringMove =
            all.stream()
                .filter(r -> r.record().key().startsWith("due-"))
                .filter(r -> Long.parseLong(header(r, DelayHeaders.DUE_AT)) > stoppedAt)
                .count();
        System.out.printf(
            "MOVE %d of %d one-shots were due after the old deployment stopped and fired in the"
                + " new one; the move took %d ms after the stop%n",
            dueDuringMove, DUE, movedAt - stoppedAt);

        // and: the cancels made in the old deployment moved as markers: a retry of a cancelled
        // schedule's request, stamped as the original was, is superseded there too
        ProducerRecord<String, String> retry =
            new ProducerRecord<>(NEW + "-requests", null, scheduledAt, "far-3", "never");
        retry.headers().add(DelayHeaders.TARGET_TOPIC, TARGET.getBytes(StandardCharsets.UTF_8));
        retry.headers().add(DelayHeaders.AFTER, "PT1H".getBytes(StandardCharsets.UTF_8));
        producer.send(retry).get(30, TimeUnit.SECONDS);

        // and: the five cancels sent to the new deployment before the move won over the moved
        // schedules, which were dead-lettered as superseded, not dropped
        try (TargetTopicReader deadLetters =
            new TargetTopicReader(kafka.bootstrapServers(), NEW + "-dlq")) {
          List<Received> dead = deadLetters.pollUntil(received -> received.size() >= 6, TIMEOUT);
          assertThat(dead)
              .extracting(r -> r.record().key() + " " + header(r, DelayHeaders.ERROR))
              .containsExactlyInAnyOrder(
                  "far-3 SUPERSEDED",
                  "far-15 SUPERSEDED",
                  "far-16 SUPERSEDED",
                  "far-17 SUPERSEDED",
                  "far-18 SUPERSEDED",
                  "far-19 SUPERSEDED");
        }

        // and: a second run finds nothing left to move
        Run again = move(kafka);
        assertThat(again.code()).as(again.err()).isEqualTo(CommandLine.OK);
        assertThat(again.out()).contains("Moved 0 ids").contains("Forwarded 0 requests");
      }
    }
  }

  private static List<String> dueIds() {
    return IntStream.range(0, DUE).mapToObj(i -> "due-" + i).toList();
  }

  private static Set<String> firedIds(List<Received> received) {
    return received.stream().map(r -> r.record().key()).collect(Collectors.toSet());
  }

  /** How many fires of an id the consumer saw that fired after an instant. */
  private static long firedAfter(List<Received> received, String id, long afterMs) {
    return received.stream()
        .filter(r -> r.record().key().equals(id))
        .filter(r -> Long.parseLong(header(r, DelayHeaders.FIRED_AT)) > afterMs)
        .count();
  }

  private static String header(Received received, String name) {
    Header header = received.record().headers().lastHeader(name);
    return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
  }

  private record Run(int code, String out, String err) {}

  /** {@code kdelay move}, as a user runs it, from the old deployment to the new one. */
  private static Run move(KafkaTestCluster kafka) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        new Main(
                Map.of(),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8))
            .execute(
                List.of(
                    "move",
                    "--bootstrap-servers",
                    kafka.bootstrapServers(),
                    "--application-id",
                    OLD,
                    "--requests-topic",
                    OLD + "-requests",
                    "--to",
                    NEW + "-requests",
                    "--batch",
                    "50"));
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static void send(
      KafkaProducer<String, String> producer,
      String deployment,
      String id,
      String value,
      String timeHeader,
      Object time)
      throws Exception {
    ProducerRecord<String, String> request =
        new ProducerRecord<>(deployment + "-requests", id, value);
    request.headers().add(DelayHeaders.TARGET_TOPIC, TARGET.getBytes(StandardCharsets.UTF_8));
    request.headers().add(timeHeader, time.toString().getBytes(StandardCharsets.UTF_8));
    producer.send(request).get(30, TimeUnit.SECONDS);
  }

  private static void action(
      KafkaProducer<String, String> producer, String deployment, String id, String action)
      throws Exception {
    ProducerRecord<String, String> request =
        new ProducerRecord<>(deployment + "-requests", id, null);
    request.headers().add(DelayHeaders.ACTION, action.getBytes(StandardCharsets.UTF_8));
    producer.send(request).get(30, TimeUnit.SECONDS);
  }

  private static KafkaProducer<String, String> producer(KafkaTestCluster kafka) {
    return new KafkaProducer<>(
        Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
        new StringSerializer(),
        new StringSerializer());
  }

  private static TargetTopicReader reader(KafkaTestCluster kafka, Admin admin) throws Exception {
    admin.createTopics(List.of(new NewTopic(TARGET, 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
    return new TargetTopicReader(kafka.bootstrapServers(), TARGET);
  }
}
