package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Merging the shares of all partitions into a page. */
class ScheduleQueriesTest {

  private static final List<ListedTask> LISTED =
      List.of(listed("a", 1), listed("c", 3), listed("e", 5));
  private static final List<ListedTask> UNREADABLE = List.of(listed("d", 4), listed("b", 2));

  @Test
  void shouldShowAnUnreadableTaskOnThePageWhereItFallsInDueOrder() {
    // when: a page of two ends at "c"
    Map<String, Object> page = page(2);

    // then: "b" falls on it; "d" is met again by the next page's scans, which start after "c"
    assertThat(ids(page.get("tasks"))).containsExactly("a", "c");
    assertThat(ids(page.get("unreadable"))).containsExactly("b");
    assertThat(page.get("next")).isEqualTo(PageRequest.cursorAfter(3, "c"));
  }

  @Test
  void shouldShowEveryUnreadableTaskOnTheLastPage() {
    Map<String, Object> page = page(5);

    assertThat(ids(page.get("tasks"))).containsExactly("a", "c", "e");
    assertThat(ids(page.get("unreadable"))).containsExactly("b", "d");
    assertThat(page.get("next")).isNull();
  }

  @Test
  void shouldLeaveOutTheUnreadableFieldWhenEveryTaskCouldBeRead() {
    Map<String, Object> page =
        ScheduleQueries.page(everything(5), new ArrayList<>(LISTED), new ArrayList<>(), null);

    assertThat(page).containsOnlyKeys("tasks", "next");
  }

  @Test
  void shouldShowNothingAfterWhereAShareStoppedAtItsByteBudgetAndContinueFromThere() {
    // given: one partition's share stopped at its budget after "c"; another one listed "e"
    ListedTask stoppedAt = listed("c", 3);

    // when
    Map<String, Object> page =
        ScheduleQueries.page(
            everything(10), new ArrayList<>(LISTED), new ArrayList<>(UNREADABLE), stoppedAt);

    // then: "e" may have company the stopped share did not read: it waits for the next page
    assertThat(ids(page.get("tasks"))).containsExactly("a", "c");
    assertThat(ids(page.get("unreadable"))).containsExactly("b");
    assertThat(page.get("next")).isEqualTo(PageRequest.cursorAfter(3, "c"));
  }

  @Test
  void shouldMoveTheCursorPastAShareThatStoppedOnAnUnreadableTask() {
    // given: the only share stopped at its budget on the unreadable "b"
    Map<String, Object> page =
        ScheduleQueries.page(
            everything(10),
            new ArrayList<>(List.of(listed("c", 3))),
            new ArrayList<>(List.of(listed("b", 2))),
            listed("b", 2));

    // then: nothing readable shown, "b" reported, and the next page starts after it
    assertThat(ids(page.get("tasks"))).isEmpty();
    assertThat(ids(page.get("unreadable"))).containsExactly("b");
    assertThat(page.get("next")).isEqualTo(PageRequest.cursorAfter(2, "b"));
  }

  private static Map<String, Object> page(int limit) {
    return ScheduleQueries.page(
        everything(limit), new ArrayList<>(LISTED), new ArrayList<>(UNREADABLE), null);
  }

  private static PageRequest everything(int limit) {
    return new PageRequest(0, null, Long.MAX_VALUE, limit);
  }

  private static ListedTask listed(String id, long dueMs) {
    return new ListedTask(dueMs, id, Map.of("id", id));
  }

  @SuppressWarnings("unchecked")
  private static List<String> ids(Object json) {
    return ((List<Map<String, Object>>) json)
        .stream().map(task -> (String) task.get("id")).toList();
  }
}
