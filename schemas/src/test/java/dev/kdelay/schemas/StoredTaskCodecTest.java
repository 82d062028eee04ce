package dev.kdelay.schemas;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.ZoneId;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.OptionalInt;
import java.util.Random;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StoredTaskCodecTest {

  private static final long DUE = 1_767_225_900_000L;

  /** The deferred occurrence's due time in {@code vectors/stored-task-v2-cron.hex}. */
  private static final long DEFERRED_DUE = 1_795_000_000_000L;

  // ------------------------------------------------------------------------------ round trips

  @Test
  void shouldRoundTripWhenOneShotHasNoKeyNoPartitionAndNoHeaders() {
    assertRoundTrip(task(once(DUE), new Target("t", null, OptionalInt.empty()), bytes("p"), 1));
  }

  @Test
  void shouldRoundTripWhenOneShotHasKeyPartitionAndHeaders() {
    Target target = new Target("orders.timeouts", bytes("customer-7"), OptionalInt.of(3));
    List<Header> headers = List.of(header("traceparent", "00-abc-01"), header("x", "1"));

    assertRoundTrip(new StoredTask(new Schedule(target, once(DUE), bytes("{}"), headers), 1));
  }

  @Test
  void shouldRoundTripWhenCronHasEveryOption() {
    CronSpec cron =
        new CronSpec(
            "0 0 9 * * MON-FRI",
            CronFlavor.SPRING,
            ZoneId.of("Europe/Berlin"),
            1_769_904_000_000L,
            1_798_761_599_000L,
            10,
            Misfire.FIRE_ALL);

    assertRoundTrip(task(cron, new Target("reports", bytes("k"), OptionalInt.of(0)), null, 42));
  }

  @Test
  void shouldRoundTripWhenCronHasNoBoundsAndEveryFlavorAndMisfire() {
    for (CronFlavor flavor : CronFlavor.values()) {
      for (Misfire misfire : Misfire.values()) {
        CronSpec cron =
            new CronSpec(
                "* * * * *",
                flavor,
                ZoneId.of("UTC"),
                CronSpec.NO_START,
                CronSpec.NO_END,
                CronSpec.UNLIMITED,
                misfire);
        assertRoundTrip(task(cron, new Target("t", null, OptionalInt.empty()), bytes("p"), 1));
      }
    }
  }

  @Test
  void shouldRoundTripWhenZoneIsAnOffsetOrAlias() {
    for (String zone : List.of("Z", "+05:30", "UTC", "GMT", "US/Pacific", "Asia/Kolkata")) {
      CronSpec cron =
          new CronSpec("0 0 * * * ?", CronFlavor.QUARTZ, ZoneId.of(zone), 0, 1, 1, Misfire.SKIP);
      assertRoundTrip(task(cron, new Target("t", null, OptionalInt.empty()), bytes("p"), 1));
    }
  }

  @Test
  void shouldRoundTripTombstoneWhenPayloadIsNull() {
    StoredTask decoded =
        assertRoundTrip(task(once(DUE), new Target("t", bytes("k"), OptionalInt.empty()), null, 1));

    assertThat(decoded.schedule().payload()).isNull();
  }

  @Test
  void shouldKeepEmptyPayloadDistinctFromTombstoneWhenRoundTripped() {
    StoredTask decoded =
        assertRoundTrip(
            task(once(DUE), new Target("t", null, OptionalInt.empty()), new byte[0], 1));

    assertThat(decoded.schedule().payload()).isEmpty();
  }

  @Test
  void shouldKeepEmptyKeyDistinctFromAbsentKeyWhenRoundTripped() {
    StoredTask decoded =
        assertRoundTrip(
            task(once(DUE), new Target("t", new byte[0], OptionalInt.empty()), null, 1));

    assertThat(decoded.schedule().target().key()).isEmpty();
  }

  @Test
  void shouldRoundTripHeadersWhenValuesAreEmptyNullDuplicatedOrBinary() {
    List<Header> headers =
        List.of(
            new RecordHeader("empty", new byte[0]),
            new RecordHeader("none", (byte[]) null),
            header("dup", "1"),
            header("dup", "2"),
            new RecordHeader("bin", new byte[] {(byte) 0xff, 0, (byte) 0x80}),
            header("", "empty name"));
    Schedule schedule =
        new Schedule(new Target("t", null, OptionalInt.empty()), once(DUE), bytes("p"), headers);

    StoredTask decoded = assertRoundTrip(new StoredTask(schedule, 1));

    assertThat(decoded.schedule().headers()).containsExactlyElementsOf(headers);
    assertThat(decoded.schedule().headers().get(1).value()).isNull();
  }

  @Test
  void shouldRoundTripUnicodeWhenTextIsNotAscii() {
    List<Header> headers = List.of(header("spur-🕒", "ключ-é-日本"));
    CronSpec cron =
        new CronSpec(
            "0 0 9 ? * MON-FRI", CronFlavor.QUARTZ, ZoneId.of("Asia/Tokyo"), 0, 5, 3, Misfire.SKIP);
    Schedule schedule =
        new Schedule(
            new Target("t", bytes("заказ-42"), OptionalInt.empty()),
            cron,
            bytes("données 🕒"),
            headers);

    assertRoundTrip(new StoredTask(schedule, 9));
  }

  @Test
  void shouldRoundTripLargePayloadWhenItExceedsTheInitialBuffer() {
    byte[] payload = new byte[5 * 1024 * 1024 + 3];
    new Random(7).nextBytes(payload);
    List<Header> headers =
        IntStream.range(0, 100)
            .mapToObj(i -> header("h" + i, "v".repeat(i * 10)))
            .collect(Collectors.toList());
    Schedule schedule =
        new Schedule(
            new Target("t", new byte[300], OptionalInt.of(1)), once(DUE), payload, headers);

    StoredTask decoded = assertRoundTrip(new StoredTask(schedule, 1));

    assertThat(decoded.schedule().payload()).isEqualTo(payload);
  }

  @Test
  void shouldRoundTripExtremeNumbersWhenAtTheEdgesOfTheirRange() {
    Target target = new Target("t", null, OptionalInt.of(Integer.MAX_VALUE));

    assertRoundTrip(task(once(Long.MIN_VALUE), target, bytes("p"), Long.MAX_VALUE));
    assertRoundTrip(task(once(Long.MAX_VALUE), target, bytes("p"), 1));
    assertRoundTrip(task(once(0), target, bytes("p"), 1));
  }

  @Test
  void shouldRoundTripEveryScheduleWhenTheParserAcceptsARequestVector() {
    // The store must hold whatever the parser accepts.
    int roundTripped = 0;
    for (JsonNode vector : RequestVectorsTest.allVectors()) {
      if (vector.hasNonNull("knownIssue")) {
        continue;
      }
      if (RequestVectorsTest.parse(vector) instanceof ParseResult.Accepted accepted
          && accepted.request().schedule() != null) {
        assertRoundTrip(new StoredTask(accepted.request().schedule(), 1));
        roundTripped++;
      }
    }

    assertThat(roundTripped).isGreaterThan(30);
  }

  // ------------------------------------------------------------------------------ layout

  @Test
  void shouldWriteTheVersionAsTheFirstByteWhenEncoding() {
    byte[] encoded = StoredTaskCodec.encode(onceTask());

    assertThat(encoded[0]).isEqualTo(StoredTaskCodec.VERSION_1).isEqualTo((byte) 1);
  }

  @Test
  void shouldMatchTheGoldenBytesWhenEncodingTheOneShotVector() {
    assertThat(hex(StoredTaskCodec.encode(onceTask())))
        .isEqualTo(hex(golden("/vectors/stored-task-v1.hex")));
  }

  @Test
  void shouldDecodeTheGoldenBytesWhenReadingTheOneShotVector() {
    assertThat(StoredTaskCodec.decode(golden("/vectors/stored-task-v1.hex"))).isEqualTo(onceTask());
  }

  @Test
  void shouldMatchTheGoldenBytesWhenEncodingTheCronVector() {
    assertThat(hex(StoredTaskCodec.encode(cronTask())))
        .isEqualTo(hex(golden("/vectors/stored-task-v1-cron.hex")));
  }

  @Test
  void shouldMatchTheGoldenBytesWhenEncodingTheDeferredCronVector() {
    assertThat(hex(StoredTaskCodec.encode(cronTask().deferredFrom(DEFERRED_DUE))))
        .isEqualTo(hex(golden("/vectors/stored-task-v2-cron.hex")));
  }

  @Test
  void shouldDecodeTheGoldenBytesWhenReadingTheDeferredCronVector() {
    assertThat(StoredTaskCodec.decode(golden("/vectors/stored-task-v2-cron.hex")))
        .isEqualTo(cronTask().deferredFrom(DEFERRED_DUE));
  }

  @Test
  void shouldWriteVersion1UnlessTheTaskIsDeferredWhenEncoding() {
    // Tasks no limit deferred stay readable by a kdelay that knows only version 1.
    assertThat(StoredTaskCodec.encode(onceTask())[0]).isEqualTo(StoredTaskCodec.VERSION_1);
    assertThat(StoredTaskCodec.encode(onceTask().deferredFrom(DUE))[0])
        .isEqualTo(StoredTaskCodec.VERSION_2);
    assertThat(StoredTaskCodec.encode(onceTask().deferredFrom(DUE).undeferred()))
        .isEqualTo(StoredTaskCodec.encode(onceTask()));
    assertRoundTrip(onceTask().deferredFrom(Long.MIN_VALUE));
    assertRoundTrip(cronTask().deferredFrom(Long.MAX_VALUE));
  }

  @Test
  void shouldFireAsTheDeferredOccurrenceOrElseAtItsEntrysTime() {
    assertThat(onceTask().firesAsDueMs(DUE + 5_000)).isEqualTo(DUE + 5_000);
    assertThat(onceTask().deferredFrom(DUE).firesAsDueMs(DUE + 5_000)).isEqualTo(DUE);
  }

  @Test
  void shouldReadTheDueTimeATaskFiresAsWithoutDecodingIt() {
    for (StoredTask task :
        List.of(
            onceTask(),
            cronTask(),
            onceTask().deferredFrom(DUE),
            cronTask().deferredFrom(DEFERRED_DUE),
            onceTask().deferredFrom(Long.MIN_VALUE))) {
      assertThat(StoredTaskCodec.firesAsDueMs(StoredTaskCodec.encode(task), DUE + 5_000))
          .as("%s", task)
          .isEqualTo(task.firesAsDueMs(DUE + 5_000));
    }
    assertThat(
            StoredTaskCodec.firesAsDueMs(golden("/vectors/stored-task-v2-cron.hex"), DUE + 5_000))
        .isEqualTo(DEFERRED_DUE);
    // not a task: the entry's time, and decoding reports it
    assertThat(StoredTaskCodec.firesAsDueMs(new byte[0], DUE)).isEqualTo(DUE);
    assertThat(StoredTaskCodec.firesAsDueMs(new byte[] {StoredTaskCodec.VERSION_2, 1, 2}, DUE))
        .isEqualTo(DUE);
  }

  @Test
  void shouldDecodeTheGoldenBytesWhenReadingTheCronVector() {
    assertThat(StoredTaskCodec.decode(golden("/vectors/stored-task-v1-cron.hex")))
        .isEqualTo(cronTask());
  }

  // ------------------------------------------------------------------------------ bad input

  @ParameterizedTest
  @ValueSource(bytes = {0, 3, 4, 0x7f, (byte) 0x80, (byte) 0xff})
  void shouldThrowWhenVersionIsUnknown(byte version) {
    byte[] encoded = StoredTaskCodec.encode(onceTask());
    encoded[0] = version;

    assertThatThrownBy(() -> StoredTaskCodec.decode(encoded))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown stored task version " + version);
  }

  @Test
  void shouldThrowWhenDataIsEmpty() {
    assertThatThrownBy(() -> StoredTaskCodec.decode(new byte[0]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("malformed stored task");
  }

  @Test
  void shouldThrowWhenDataIsTruncatedAtAnyByte() {
    for (StoredTask task : List.of(onceTask(), cronTask(), cronTask().deferredFrom(DUE))) {
      byte[] encoded = StoredTaskCodec.encode(task);
      for (int length = 0; length < encoded.length; length++) {
        byte[] truncated = Arrays.copyOf(encoded, length);
        assertThatThrownBy(() -> StoredTaskCodec.decode(truncated))
            .as("decoding the first %d of %d bytes", length, encoded.length)
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageNotContaining("trailing");
      }
    }
  }

  @Test
  void shouldThrowWhenTrailingBytesFollowTheTask() {
    byte[] encoded = StoredTaskCodec.encode(onceTask());
    byte[] longer = Arrays.copyOf(encoded, encoded.length + 2);

    assertThatThrownBy(() -> StoredTaskCodec.decode(longer))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("2 trailing bytes");
  }

  @Test
  void shouldThrowWhenALengthIsNegativeOrBeyondTheData() {
    byte[] encoded = StoredTaskCodec.encode(onceTask());
    byte[] negative = encoded.clone();
    // bytes 2..5 hold the length of the target topic
    negative[2] = (byte) 0xff;
    byte[] huge = encoded.clone();
    huge[2] = 0x7f;

    assertThatThrownBy(() -> StoredTaskCodec.decode(negative))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> StoredTaskCodec.decode(huge))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("bad length");
  }

  @Test
  void shouldThrowWhenTopicIsEncodedAsNull() {
    byte[] encoded = StoredTaskCodec.encode(onceTask());
    byte[] nullTopic = encoded.clone();
    Arrays.fill(nullTopic, 2, 6, (byte) 0xff);

    assertThatThrownBy(() -> StoredTaskCodec.decode(nullTopic))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void shouldThrowWhenCronFlavorOrMisfireOrdinalIsUnknown() {
    byte[] encoded = StoredTaskCodec.encode(cronTask());
    int flavorAt = indexOfCronFlavor(encoded);
    byte[] badFlavor = encoded.clone();
    badFlavor[flavorAt] = 9;
    byte[] badMisfire = encoded.clone();
    badMisfire[encoded.length - 9] = (byte) 0xff;

    assertThatThrownBy(() -> StoredTaskCodec.decode(badFlavor))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("malformed stored task");
    assertThatThrownBy(() -> StoredTaskCodec.decode(badMisfire))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("malformed stored task");
  }

  @Test
  void shouldThrowWhenZoneIsUnknown() {
    StoredTask task =
        task(
            new CronSpec(
                "* * * * *", CronFlavor.UNIX, ZoneId.of("Europe/Paris"), 0, 1, 0, Misfire.SKIP),
            new Target("t", null, OptionalInt.empty()),
            null,
            1);
    byte[] encoded = StoredTaskCodec.encode(task);
    byte[] badZone = replaceOnce(encoded, bytes("Europe/Paris"), bytes("Europe/Pxris"));

    assertThatThrownBy(() -> StoredTaskCodec.decode(badZone))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("malformed stored task");
  }

  @Test
  void shouldThrowWhenOccurrenceIsNotPositive() {
    byte[] encoded = StoredTaskCodec.encode(onceTask());
    Arrays.fill(encoded, encoded.length - 8, encoded.length, (byte) 0);

    assertThatThrownBy(() -> StoredTaskCodec.decode(encoded))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("occurrence");
  }

  @Test
  void shouldThrowOnlyIllegalArgumentWhenBytesAreCorruptedAtRandom() {
    Random random = new Random(20_260_101L);
    List<byte[]> seeds =
        List.of(StoredTaskCodec.encode(onceTask()), StoredTaskCodec.encode(cronTask()));
    for (int i = 0; i < 20_000; i++) {
      byte[] data = seeds.get(i % 2).clone();
      int flips = 1 + random.nextInt(4);
      for (int f = 0; f < flips; f++) {
        data[random.nextInt(data.length)] = (byte) random.nextInt(256);
      }
      byte[] corrupted = data;
      assertThatCode(
              () -> {
                try {
                  StoredTaskCodec.decode(corrupted);
                } catch (IllegalArgumentException expected) {
                  // the one failure decode may report
                }
              })
          .as("decoding %s", HexFormat.of().formatHex(corrupted))
          .doesNotThrowAnyException();
    }
  }

  @Test
  void shouldSummarizeWhatDecodingShowsWithoutThePayloadOrHeaders() {
    for (String vector :
        List.of(
            "/vectors/stored-task-v1.hex",
            "/vectors/stored-task-v1-cron.hex",
            "/vectors/stored-task-v2-cron.hex")) {
      byte[] golden = golden(vector);
      assertThat(StoredTaskCodec.summarize(golden))
          .as(vector)
          .usingRecursiveComparison()
          .isEqualTo(StoredTaskSummary.of(StoredTaskCodec.decode(golden)));
    }
    StoredTaskSummary tombstone =
        StoredTaskCodec.summarize(
            StoredTaskCodec.encode(
                new StoredTask(
                    new Schedule(
                        new Target("t", null, OptionalInt.empty()),
                        new Timing.Once(5),
                        null,
                        List.of()),
                    1)));
    assertThat(tombstone.payloadBytes()).isEqualTo(StoredTaskSummary.NO_PAYLOAD);
    assertThat(tombstone.recurring()).isFalse();
  }

  @Test
  void shouldRefuseWhatDecodingRefusesWhenSummarizing() {
    for (StoredTask task : List.of(onceTask(), cronTask())) {
      byte[] encoded = StoredTaskCodec.encode(task);
      for (int length = 0; length < encoded.length; length++) {
        byte[] truncated = Arrays.copyOf(encoded, length);
        assertThatThrownBy(() -> StoredTaskCodec.summarize(truncated))
            .as("summarizing the first %d of %d bytes", length, encoded.length)
            .isInstanceOf(IllegalArgumentException.class);
      }
    }
  }

  // ------------------------------------------------------------------------------ fixtures

  /** The task in {@code vectors/stored-task-v1.hex}. */
  private static StoredTask onceTask() {
    List<Header> headers =
        List.of(
            header("traceparent", "00-abc-01"),
            new RecordHeader("empty", new byte[0]),
            new RecordHeader("none", (byte[]) null));
    Target target = new Target("orders.timeouts", bytes("customer-7"), OptionalInt.of(3));
    return new StoredTask(new Schedule(target, once(DUE), bytes("{\"order\":42}"), headers), 1);
  }

  /** The task in {@code vectors/stored-task-v1-cron.hex}. */
  private static StoredTask cronTask() {
    CronSpec cron =
        new CronSpec(
            "0 0 9 * * MON-FRI",
            CronFlavor.SPRING,
            ZoneId.of("Europe/Berlin"),
            1_769_904_000_000L,
            CronSpec.NO_END,
            10,
            Misfire.SKIP);
    Target target = new Target("reports", null, OptionalInt.empty());
    return new StoredTask(new Schedule(target, cron, null, List.of(header("x-tag", "é"))), 7);
  }

  private static StoredTask assertRoundTrip(StoredTask task) {
    byte[] encoded = StoredTaskCodec.encode(task);
    assertThat(StoredTaskCodec.encodedLength(task)).as("encodedLength").isEqualTo(encoded.length);
    StoredTask decoded = StoredTaskCodec.decode(encoded);
    assertThat(decoded).isEqualTo(task);
    assertThat(decoded.schedule().target().key()).isEqualTo(task.schedule().target().key());
    assertThat(decoded.schedule().payload()).isEqualTo(task.schedule().payload());
    assertThat(StoredTaskCodec.encode(decoded)).isEqualTo(encoded);
    return decoded;
  }

  private static StoredTask task(Timing timing, Target target, byte[] payload, long occurrence) {
    return new StoredTask(new Schedule(target, timing, payload, List.of()), occurrence);
  }

  private static Timing.Once once(long dueMs) {
    return new Timing.Once(dueMs);
  }

  private static Header header(String name, String value) {
    return new RecordHeader(name, bytes(value));
  }

  private static byte[] bytes(String text) {
    return text.getBytes(UTF_8);
  }

  private static String hex(byte[] bytes) {
    return HexFormat.ofDelimiter(" ").formatHex(bytes);
  }

  /** Reads a hex vector: {@code #} starts a comment, whitespace is insignificant. */
  static byte[] golden(String resource) {
    try (InputStream in = StoredTaskCodecTest.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException(resource + " is not on the test classpath");
      }
      String hex =
          new String(in.readAllBytes(), UTF_8)
              .lines()
              .map(line -> line.replaceFirst("#.*", ""))
              .collect(Collectors.joining())
              .replaceAll("\\s+", "");
      return HexFormat.of().parseHex(hex);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The offset of the flavour byte: right after the cron expression string. */
  private static int indexOfCronFlavor(byte[] encoded) {
    byte[] expression = bytes("0 0 9 * * MON-FRI");
    return indexOf(encoded, expression) + expression.length;
  }

  private static byte[] replaceOnce(byte[] data, byte[] from, byte[] to) {
    int at = indexOf(data, from);
    byte[] copy = data.clone();
    System.arraycopy(to, 0, copy, at, to.length);
    return copy;
  }

  private static int indexOf(byte[] data, byte[] part) {
    outer:
    for (int i = 0; i + part.length <= data.length; i++) {
      for (int j = 0; j < part.length; j++) {
        if (data[i + j] != part[j]) {
          continue outer;
        }
      }
      return i;
    }
    throw new AssertionError("not found");
  }
}
