package dev.kdelay.schemas;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.Test;

/** The records the parser and the codec produce: equality by content, and their invariants. */
class ValueTypesTest {

  private static final Timing ONCE = new Timing.Once(1_000L);

  @Test
  void shouldBeEqualWhenKeyAndPayloadBytesAreEqualButNotTheSameArrays() {
    Schedule a = schedule(new Target("t", bytes("k"), OptionalInt.of(1)), bytes("p"));
    Schedule b = schedule(new Target("t", bytes("k"), OptionalInt.of(1)), bytes("p"));

    assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
    assertThat(a.target()).isEqualTo(b.target()).hasSameHashCodeAs(b.target());
  }

  @Test
  void shouldNotBeEqualWhenPayloadIsNullInsteadOfEmpty() {
    Target target = new Target("t", null, OptionalInt.empty());

    assertThat(schedule(target, null)).isNotEqualTo(schedule(target, new byte[0]));
    assertThat(new Target("t", null, OptionalInt.empty()))
        .isNotEqualTo(new Target("t", new byte[0], OptionalInt.empty()));
  }

  @Test
  void shouldCopyHeadersWhenScheduleIsCreated() {
    List<Header> headers = new ArrayList<>(List.of(new RecordHeader("a", bytes("1"))));
    Schedule schedule =
        new Schedule(new Target("t", null, OptionalInt.empty()), ONCE, null, headers);

    headers.add(new RecordHeader("b", bytes("2")));

    assertThat(schedule.headers()).hasSize(1);
    assertThatThrownBy(() -> schedule.headers().add(new RecordHeader("c", bytes("3"))))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void shouldNotPrintPayloadOrKeyWhenConvertedToString() {
    Schedule schedule =
        schedule(
            new Target("t", bytes("secret-key"), OptionalInt.empty()), bytes("secret-payload"));

    assertThat(schedule.toString()).doesNotContain("secret");
  }

  @Test
  void shouldBeRecurringOnlyWhenTimingIsCron() {
    CronSpec cron =
        new CronSpec(
            "* * * * *",
            CronFlavor.UNIX,
            ZoneId.of("UTC"),
            CronSpec.NO_START,
            CronSpec.NO_END,
            CronSpec.UNLIMITED,
            Misfire.FIRE_ONCE);
    Target target = new Target("t", null, OptionalInt.empty());

    assertThat(new Schedule(target, cron, null, List.of()).recurring()).isTrue();
    assertThat(new Schedule(target, ONCE, null, List.of()).recurring()).isFalse();
  }

  @Test
  void shouldRequireAScheduleExactlyWhenActionIsSchedule() {
    Schedule schedule = schedule(new Target("t", null, OptionalInt.empty()), null);

    assertThatThrownBy(() -> new DelayRequest(Action.SCHEDULE, "id", 0, null))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new DelayRequest(Action.CANCEL, "id", 0, schedule))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(new DelayRequest(Action.PAUSE, "id", 0, null).schedule()).isNull();
  }

  @Test
  void shouldThrowWhenRequiredPartsAreNull() {
    assertThatThrownBy(() -> new Target(null, null, OptionalInt.empty()))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("topic");
    assertThatThrownBy(() -> new Target("t", null, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("partition");
    assertThatThrownBy(() -> new DelayRequest(null, "id", 0, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("action");
    assertThatThrownBy(() -> new Rejection(null, "m"))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("reason");
  }

  @Test
  void shouldThrowWhenOccurrenceIsNotPositive() {
    Schedule schedule = schedule(new Target("t", null, OptionalInt.empty()), null);

    assertThatThrownBy(() -> new StoredTask(schedule, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("occurrence");
    assertThat(new StoredTask(schedule, 1).occurrence()).isEqualTo(1);
  }

  private static Schedule schedule(Target target, byte[] payload) {
    return new Schedule(target, ONCE, payload, List.of(new RecordHeader("h", bytes("v"))));
  }

  private static byte[] bytes(String text) {
    return text.getBytes(UTF_8);
  }
}
