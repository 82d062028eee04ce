package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kdelay.schemas.Schedule;
import dev.kdelay.schemas.StoredTask;
import dev.kdelay.schemas.StoredTaskSummary;
import dev.kdelay.schemas.Target;
import dev.kdelay.schemas.TenantIds;
import dev.kdelay.schemas.Timing;
import dev.kdelay.topology.Decoded;
import dev.kdelay.topology.ReadableSchedules;
import dev.kdelay.topology.ScheduleView;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.Test;

/**
 * Reads of one partition's schedule store, answered by a store that returns what the topology's
 * typed reads return, some of it unreadable the way a damaged store or a newer kdelay would leave
 * it.
 */
class LocalStoresTest {

  private static final int PARTITION = 3;
  private static final long DUE = 1_900_000_000_000L;
  private static final HostInfo SELF = new HostInfo("kdelay-1", 8080);

  private final FakeSchedules schedules = new FakeSchedules();
  private final LocalStores local = new LocalStores(partition -> schedules, SELF);

  @Test
  void shouldAnswerAPendingScheduleFromTheStore() throws Exception {
    // given
    schedules.views.put("order-42", Decoded.readable(pending("order-42", DUE)));

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
  void shouldAnswer404WithStatusUnknownForAnIdNothingIsHeldFor() throws Exception {
    ApiResponse response = local.view("never", PARTITION);

    assertThat(response.status()).isEqualTo(404);
    assertThat(json(response).path("status").asText()).isEqualTo("unknown");
  }

  @Test
  void shouldAnswer500UnreadableTaskWithTheIdWhenWhatIsStoredCannotBeDecoded() throws Exception {
    // given
    schedules.views.put("broken", Decoded.unreadable("malformed stored task"));

    // when
    ApiResponse response = local.view("broken", PARTITION);

    // then
    assertThat(response.status()).isEqualTo(500);
    JsonNode json = json(response);
    assertThat(json.path("error").asText()).isEqualTo("UNREADABLE_TASK");
    assertThat(json.path("id").asText()).isEqualTo("broken");
    assertThat(json.path("partition").asInt()).isEqualTo(PARTITION);
    assertThat(json.path("instance").asText()).isEqualTo("kdelay-1:8080");
    String errorId = json.path("errorId").asText();
    assertThat(errorId).hasSize(36);
    assertThat(json.path("message").asText())
        .contains("cannot be decoded", "dead-lettered", "error_id " + errorId)
        .doesNotContain("malformed stored task");
  }

  @Test
  void shouldAnswer503WhenThePartitionCannotBeReadNow() {
    LocalStores moving =
        new LocalStores(
            partition -> {
              throw new InvalidStateStoreException("migrating");
            },
            SELF);

    assertThatThrownBy(() -> moving.view("a", PARTITION))
        .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(503));
  }

  @Test
  void shouldListTheReadableTasksAndReportTheUnreadableOnes() {
    // given: three tasks, the middle one unreadable
    schedules.listed.add(
        new ReadableSchedules.Listed(
            "first", DUE, Decoded.readable(StoredTaskSummary.of(task(DUE)))));
    schedules.listed.add(new ReadableSchedules.Listed("broken", DUE + 1, Decoded.unreadable("x")));
    schedules.listed.add(
        new ReadableSchedules.Listed(
            "last", DUE + 2, Decoded.readable(StoredTaskSummary.of(task(DUE + 2)))));

    // when
    LocalStores.Share share = local.pending(PARTITION, everything(100), Long.MAX_VALUE);

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
    assertThat(json.path("message").asText()).isEqualTo("x");
    assertThat(share.stoppedAt()).isNull();
  }

  @Test
  void shouldSayWhoseAndWhichATenantsScheduleIsWhenListingIt() {
    String kept = TenantIds.qualified("teama", "order-1");
    schedules.listed.add(
        new ReadableSchedules.Listed(kept, DUE, Decoded.readable(StoredTaskSummary.of(task(DUE)))));
    schedules.listed.add(
        new ReadableSchedules.Listed(
            "order-1", DUE, Decoded.readable(StoredTaskSummary.of(task(DUE)))));

    List<ListedTask> tasks = local.pending(PARTITION, everything(100), Long.MAX_VALUE).tasks();

    JsonNode tenant = ApiResponse.MAPPER.valueToTree(tasks.get(0).json());
    assertThat(tenant.path("id").asText()).isEqualTo(kept);
    assertThat(tenant.path("tenant").asText()).isEqualTo("teama");
    assertThat(tenant.path("tenantId").asText()).isEqualTo("order-1");
    assertThat(tenant.path("target").path("key").asText()).isEqualTo("order-1");
    JsonNode shared = ApiResponse.MAPPER.valueToTree(tasks.get(1).json());
    assertThat(shared.has("tenant")).isFalse();
    assertThat(shared.path("target").path("key").asText()).isEqualTo("order-1");
  }

  @Test
  void shouldSayWhereAShareStoppedAtItsByteBudget() {
    // given: a listing that stopped at its budget after its second task
    schedules.listed.add(
        new ReadableSchedules.Listed(
            "first", DUE, Decoded.readable(StoredTaskSummary.of(task(DUE)))));
    schedules.listed.add(
        new ReadableSchedules.Listed(
            "second", DUE + 1, Decoded.readable(StoredTaskSummary.of(task(DUE + 1)))));
    schedules.complete = false;

    // when
    LocalStores.Share share = local.pending(PARTITION, everything(100), 1024);

    // then
    assertThat(schedules.maxBytes).isEqualTo(1024);
    assertThat(share.stoppedAt().id()).isEqualTo("second");
    assertThat(share.stoppedAt().dueMs()).isEqualTo(DUE + 1);
  }

  @Test
  void shouldKeepOnlyMatchesAndSayWhereAFilteredScanStopped() {
    // given: a scan that read its limit of three tasks, two of them for another topic or id
    schedules.listed.add(
        new ReadableSchedules.Listed(
            "order/1", DUE, Decoded.readable(StoredTaskSummary.of(task(DUE)))));
    schedules.listed.add(
        new ReadableSchedules.Listed(
            "invoice/1", DUE + 1, Decoded.readable(StoredTaskSummary.of(task(DUE + 1)))));
    schedules.listed.add(
        new ReadableSchedules.Listed(
            "order/2", DUE + 2, Decoded.readable(StoredTaskSummary.of(task(DUE + 2, "other")))));

    // when
    LocalStores.Share share =
        local.pending(
            PARTITION, new PageRequest(0, null, Long.MAX_VALUE, 3, "order/", "orders"), 1024);

    // then: the match, and the last task read, after which more matches may follow
    assertThat(share.tasks()).extracting(ListedTask::id).containsExactly("order/1");
    assertThat(share.stoppedAt().id()).isEqualTo("order/2");
  }

  private static ScheduleView pending(String id, long dueMs) {
    return new ScheduleView(
        id,
        ScheduleView.Status.PENDING,
        OptionalLong.of(dueMs),
        OptionalLong.empty(),
        Optional.of(task(dueMs)));
  }

  private static StoredTask task(long dueMs) {
    return task(dueMs, "orders");
  }

  private static StoredTask task(long dueMs, String topic) {
    return new StoredTask(
        new Schedule(
            new Target(topic, null, OptionalInt.empty()),
            new Timing.Once(dueMs),
            "p".getBytes(StandardCharsets.UTF_8),
            List.of()),
        1);
  }

  private static PageRequest everything(int limit) {
    return new PageRequest(0, null, Long.MAX_VALUE, limit);
  }

  private static JsonNode json(ApiResponse response) throws Exception {
    return ApiResponse.MAPPER.readTree(response.body());
  }

  /** Answers what a test put in it. */
  private static final class FakeSchedules implements ReadableSchedules {
    final Map<String, Decoded<ScheduleView>> views = new HashMap<>();
    final List<Listed> listed = new ArrayList<>();
    boolean complete = true;
    long maxBytes;

    @Override
    public Decoded<ScheduleView> view(String id) {
      return views.getOrDefault(id, Decoded.readable(ScheduleView.unknown(id)));
    }

    @Override
    public Listing pending(
        long afterDueMs, String afterId, long dueBeforeMs, int limit, long maxBytes) {
      this.maxBytes = maxBytes;
      return new Listing(listed, complete);
    }
  }
}
