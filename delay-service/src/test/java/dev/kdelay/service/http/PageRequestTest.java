package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.schemas.TenantIds;
import java.net.URI;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PageRequestTest {

  @Test
  void shouldUseDefaultsWhenNoParameterIsGiven() {
    PageRequest page = PageRequest.from(Map.of());
    assertThat(page).isEqualTo(new PageRequest(0, null, Long.MAX_VALUE, 100));
  }

  @Test
  void shouldContinueAfterTheCursorWhenTheIdHoldsAnyCharacter() {
    // given
    String cursor = PageRequest.cursorAfter(1_234, "order/42 ü+&=");

    // when
    PageRequest page =
        PageRequest.from(
            Map.of("after", cursor, "limit", "5", "dueBefore", "2026-03-01T12:00:00Z"));

    // then
    assertThat(page.afterDueMs()).isEqualTo(1_234);
    assertThat(page.afterId()).isEqualTo("order/42 ü+&=");
    assertThat(page.limit()).isEqualTo(5);
    assertThat(page.dueBeforeMs()).isEqualTo(1772366400000L);
  }

  @Test
  void shouldForwardTheSamePageWhenAskingAnotherInstance() {
    // given
    PageRequest page = new PageRequest(99, "a b/c", 5_000, 7);

    // when: the query string another instance receives, decoded as it decodes it
    ApiRequest forwarded =
        ApiRequest.of("GET", URI.create("/schedules?" + page.toQuery()), new byte[0], true);

    // then
    assertThat(PageRequest.from(forwarded.query())).isEqualTo(page);
  }

  @Test
  void shouldStartAtTheDueTimeAndKeepTheFiltersWhenSearching() {
    // when
    PageRequest page =
        PageRequest.from(
            Map.of("dueAfter", "1970-01-01T00:00:05Z", "idPrefix", "order/", "topic", "t"));

    // then: a start position before every id due then, and the filters
    assertThat(page).isEqualTo(new PageRequest(5_000, "", Long.MAX_VALUE, 100, "order/", "t"));
    assertThat(page.matches("order/1", "t")).isTrue();
    assertThat(page.matches("order/1", "u")).isFalse();
    assertThat(page.matches("invoice/1", "t")).isFalse();
    // and a cursor before the start time starts at the start time; one after it continues
    assertThat(
            PageRequest.from(Map.of("dueAfter", "5000", "after", PageRequest.cursorAfter(1, "a"))))
        .isEqualTo(new PageRequest(5_000, "", Long.MAX_VALUE, 100));
    assertThat(
            PageRequest.from(
                Map.of("dueAfter", "5000", "after", PageRequest.cursorAfter(6_000, "a"))))
        .isEqualTo(new PageRequest(6_000, "a", Long.MAX_VALUE, 100));
  }

  @Test
  void shouldForwardASearchWhenAskingAnotherInstance() {
    for (PageRequest page :
        List.of(
            new PageRequest(5_000, "", 9_000, 7, "a b/&", "t.x"),
            new PageRequest(5_000, "id", 9_000, 7, null, "t"))) {
      ApiRequest forwarded =
          ApiRequest.of("GET", URI.create("/schedules?" + page.toQuery()), new byte[0], true);

      assertThat(PageRequest.from(forwarded.query())).isEqualTo(page);
    }
  }

  @Test
  void shouldListOneTenantsTasksAndMatchTheIdAsItsTenantSentIt() {
    // given: the ids kdelay keeps for two tenants' "order/1", and a plain one
    String teama = TenantIds.qualified("teama", "order/1");
    String teamb = TenantIds.qualified("teamb", "order/1");
    PageRequest all = PageRequest.from(Map.of("idPrefix", "order/"));
    PageRequest teamas = all.ofTenant("teama");

    // then
    assertThat(all.matches(teama, "t")).isTrue();
    assertThat(all.matches(teamb, "t")).isTrue();
    assertThat(all.matches("order/1", "t")).isTrue();
    assertThat(teamas.matches(teama, "t")).isTrue();
    assertThat(teamas.matches(teamb, "t")).isFalse();
    assertThat(teamas.matches("order/1", "t")).isFalse();
    assertThat(teamas.filtered()).isTrue();
    // and another instance asked for the page lists the same tenant's
    ApiRequest forwarded =
        ApiRequest.of("GET", URI.create("/schedules?" + teamas.toQuery()), new byte[0], true);
    assertThat(PageRequest.from(forwarded.query())).isEqualTo(teamas);
  }

  @Test
  void shouldRejectMalformedParameters() {
    assertCode(Map.of("limit", "0"), "BAD_REQUEST");
    assertCode(Map.of("limit", "1001"), "BAD_REQUEST");
    assertCode(Map.of("limit", "ten"), "BAD_REQUEST");
    assertCode(Map.of("dueBefore", "soon"), "BAD_TIME");
    assertCode(Map.of("dueAfter", "later"), "BAD_TIME");
    assertCode(Map.of("after", "12"), "BAD_CURSOR");
    assertCode(Map.of("after", "x.YQ"), "BAD_CURSOR");
    assertCode(Map.of("offset", "10"), "BAD_REQUEST");
  }

  private static void assertCode(Map<String, String> query, String code) {
    assertThatThrownBy(() -> PageRequest.from(query))
        .as(query.toString())
        .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.code()).isEqualTo(code));
  }
}
