package dev.kdelay.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.schemas.DelayHeaders;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

class ObservationTest {

  private static final long DUE = 10_000;

  @Test
  void shouldGroupABurstIntoTheCommitsThatMadeItVisible() {
    // given a burst of 7 due at once: 3 fired by +40 ms and visible at +60 to +62 (one commit
    // fetched in two polls), then 4 fired by +150 ms and visible at +170
    Observation.Builder builder = new Observation.Builder("t", 7);
    builder.add(fired(0, 20), DUE + 60);
    builder.add(fired(1, 40), DUE + 60);
    builder.add(fired(2, 30), DUE + 62);
    for (int i = 3; i < 7; i++) {
      builder.add(fired(i, 100 + i * 10), DUE + 170);
    }

    // when
    var steps = builder.build().steps(10);

    // then
    assertThat(steps)
        .containsExactly(new Observation.Step(3, 40, 62), new Observation.Step(4, 160, 170));
  }

  @Test
  void shouldSeeNoStepsWithoutTimedRecords() {
    assertThat(new Observation.Builder("t", 3).build().steps(10)).isEmpty();
  }

  @Test
  void shouldShowTheCommitsOfTheRunWithTheMedianP50() {
    // given three runs whose p50 are 300, 100 and 200 ms
    Runs.Burst slow = burst(300, new Observation.Step(5, 280, 300));
    Runs.Burst fast = burst(100, new Observation.Step(5, 80, 100));
    Runs.Burst median =
        burst(200, new Observation.Step(2, 150, 180), new Observation.Step(3, 190, 200));

    // when
    String line = BurstSection.steps(java.util.List.of(slow, fast, median));

    // then
    assertThat(line)
        .isEqualTo("tasks: fired by -> visible at, ms after due: 2: 150 -> 180; 3: 190 -> 200;");
  }

  @Test
  void shouldSayWhatTheInstanceSpentDuringTheDrain() {
    // given two runs: 120 and 80 ms of stream-thread CPU, 400 and 0 ms of JIT compiling
    Runs.Burst compiling = burst(100, new StreamsCounters(0, 0, 0, 0, 0, 0, 120_000_000L, 400));
    Runs.Burst compiled = burst(100, new StreamsCounters(0, 0, 0, 0, 0, 0, 80_000_000L, 0));

    // when
    String line = BurstSection.drainWork(java.util.List.of(compiling, compiled));

    // then the medians and ranges of both
    assertThat(line).isEqualTo("stream threads' CPU 100 [80-120] ms, JIT compiling 200 [0-400] ms");
  }

  private static Runs.Burst burst(long p50, Observation.Step... steps) {
    return burst(p50, new StreamsCounters(0, 0, 0, 0, 0, 0, 0, 0), steps);
  }

  private static Runs.Burst burst(long p50, StreamsCounters drain, Observation.Step... steps) {
    return new Runs.Burst(
        5, java.time.Duration.ZERO, true, 0, 0, p50, p50, 5, 0, 0, java.util.List.of(steps), drain);
  }

  private static ConsumerRecord<byte[], byte[]> fired(int index, long firedAfterDueMs) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(DelayHeaders.DUE_AT, ascii(DUE));
    headers.add(DelayHeaders.FIRED_AT, ascii(DUE + firedAfterDueMs));
    return new ConsumerRecord<>(
        "fired",
        0,
        index,
        DUE,
        TimestampType.CREATE_TIME,
        -1,
        -1,
        ("t-" + index).getBytes(StandardCharsets.US_ASCII),
        new byte[0],
        headers,
        Optional.empty());
  }

  private static byte[] ascii(long value) {
    return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
  }
}
