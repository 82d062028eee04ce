package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kdelay.schemas.Schedule;
import dev.kdelay.schemas.StoredTask;
import dev.kdelay.schemas.StoredTaskCodec;
import dev.kdelay.schemas.Target;
import dev.kdelay.schemas.Timing;
import dev.kdelay.topology.DelayTopology;
import dev.kdelay.topology.internals.ScheduleEntry;
import dev.kdelay.topology.internals.TaskKey;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.OptionalInt;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.Test;

/**
 * Reads of one partition's stores, with stores in memory written the way the topology writes them,
 * and some of their values corrupted the way a damaged store or a newer kdelay would leave them.
 */
class LocalStoresTest {

  private static final int PARTITION = 3;
  private static final long DUE = 1_900_000_000_000L;
  private static final byte[] GARBAGE = {(byte) 0x7f, 1, 2, 3};
  private static final HostInfo SELF = new HostInfo("kdelay-1", 8080);

  private final SortedBytesStore schedules = new SortedBytesStore();
  private final SortedBytesStore tasks = new SortedBytesStore();
  private final LocalStores local =
      new LocalStores(
          (name, partition) -> name.equals(DelayTopology.SCHEDULES_STORE) ? schedules : tasks,
          SELF);

  @Test
  void shouldAnswerAPendingScheduleFromTheStores() throws Exception {
    // given
    schedule("order-42", DUE);

    // when
    ApiResponse response = local.view("order-42", PARTITION);

    // then
    assertThat(response.status()).isEqualTo(200);
    JsonNode json = json(response);
    assertThat(json.path("status").asText()).isEqualTo("pending");
    assertThat(json.path("nextDueAtMs").asLong()).isEqualTo(DUE);
    assertThat(json.path("partition").asInt()).isEqualTo(PARTITION);
    assertThat(json.path("instance").asText()).isEqualTo("kdelay-1:8080");
  }

  @Test
  void shouldAnswer500UnreadableTaskWithTheIdWhenTheStoredTaskCannotBeDecoded() throws Exception {
    // given
    schedule("broken", DUE);
    tasks.put(TaskKey.fire(DUE, "broken").toBytes(), GARBAGE);

    // when
    ApiResponse response = local.view("broken", PARTITION);

    // then
    assertThat(response.status()).isEqualTo(500);
    JsonNode json = json(response);
    assertThat(json.path("error").asText()).isEqualTo("UNREADABLE_TASK");
    assertThat(json.path("id").asText()).isEqualTo("broken");
    assertThat(json.path("partition").asInt()).isEqualTo(PARTITION);
    assertThat(json.path("instance").asText()).isEqualTo("kdelay-1:8080");
    assertThat(json.path("message").asText()).contains("cannot be decoded", "dead-lettered");
  }

  @Test
  void shouldAnswer500UnreadableTaskWhenTheScheduleEntryCannotBeDecoded() throws Exception {
    schedules.put(key("mangled"), GARBAGE);

    ApiResponse response = local.view("mangled", PARTITION);

    assertThat(response.status()).isEqualTo(500);
    assertThat(json(response).path("error").asText()).isEqualTo("UNREADABLE_TASK");
    assertThat(json(response).path("id").asText()).isEqualTo("mangled");
  }

  @Test
  void shouldAnswer503WhenThePartitionCannotBeReadNow() {
    LocalStores moving =
        new LocalStores(
            (name, partition) -> {
              throw new InvalidStateStoreException("migrating");
            },
            SELF);

    assertThatThrownBy(() -> moving.view("a", PARTITION))
        .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(503));
  }

  @Test
  void shouldListTheReadableTasksAndReportTheUnreadableOnesWhenAStoredTaskIsCorrupt()
      throws Exception {
    // given: three tasks, the middle one corrupt, and a housekeeping entry (never decoded)
    schedule("first", DUE);
    schedule("broken", DUE + 1);
    schedule("last", DUE + 2);
    tasks.put(TaskKey.fire(DUE + 1, "broken").toBytes(), GARBAGE);
    tasks.put(new TaskKey(DUE + 1, TaskKey.KIND_EXPIRE, "cancelled").toBytes(), new byte[0]);

    // when
    LocalStores.Share share = local.pending(PARTITION, everything(100));

    // then
    assertThat(share.tasks()).extracting(ListedTask::id).containsExactly("first", "last");
    assertThat(share.unreadable()).hasSize(1);
    ListedTask unreadable = share.unreadable().get(0);
    assertThat(unreadable.id()).isEqualTo("broken");
    assertThat(unreadable.dueMs()).isEqualTo(DUE + 1);
    JsonNode json = ApiResponse.MAPPER.valueToTree(unreadable.json());
    assertThat(json.path("error").asText()).isEqualTo("UNREADABLE_TASK");
    assertThat(json.path("partition").asInt()).isEqualTo(PARTITION);
    assertThat(json.path("dueAtMs").asLong()).isEqualTo(DUE + 1);
    assertThat(json.path("message").asText()).isNotBlank();
  }

  @Test
  void shouldNotReportAnUnreadableTaskBeyondTheLastTaskOfAFullShare() {
    // given
    schedule("first", DUE);
    schedule("broken", DUE + 1);
    schedule("last", DUE + 2);
    tasks.put(TaskKey.fire(DUE + 1, "broken").toBytes(), GARBAGE);

    // when: a page of one ends at the first task, before the corrupt one
    LocalStores.Share share = local.pending(PARTITION, everything(1));

    // then: the next page, which starts after "first", meets it
    assertThat(share.tasks()).extracting(ListedTask::id).containsExactly("first");
    assertThat(share.unreadable()).isEmpty();
    LocalStores.Share next =
        local.pending(PARTITION, new PageRequest(DUE, "first", Long.MAX_VALUE, 1));
    assertThat(next.tasks()).extracting(ListedTask::id).containsExactly("last");
    assertThat(next.unreadable()).extracting(ListedTask::id).containsExactly("broken");
  }

  private void schedule(String id, long dueMs) {
    schedules.put(
        key(id), new ScheduleEntry(ScheduleEntry.State.SCHEDULED, dueMs, dueMs - 1000).toBytes());
    Schedule schedule =
        new Schedule(
            new Target("orders", null, OptionalInt.empty()),
            new Timing.Once(dueMs),
            "p".getBytes(StandardCharsets.UTF_8),
            List.of());
    tasks.put(
        TaskKey.fire(dueMs, id).toBytes(), StoredTaskCodec.encode(new StoredTask(schedule, 1)));
  }

  private static Bytes key(String id) {
    return Bytes.wrap(id.getBytes(StandardCharsets.UTF_8));
  }

  private static PageRequest everything(int limit) {
    return new PageRequest(0, null, Long.MAX_VALUE, limit);
  }

  private static JsonNode json(ApiResponse response) throws Exception {
    return ApiResponse.MAPPER.readTree(response.body());
  }
}
