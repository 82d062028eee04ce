package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import org.junit.jupiter.api.Test;

class ApiRequestTest {

  @Test
  void shouldDecodeEachPathSegmentOnItsOwnWhenAnIdHoldsASlashOrAPlus() {
    // given
    String id = "order/42 +x ü";

    // when
    ApiRequest request =
        ApiRequest.of(
            "GET",
            URI.create("/schedules/" + ScheduleQueries.pathSegment(id) + "/pause"),
            new byte[0],
            false);

    // then
    assertThat(request.segments()).containsExactly("schedules", id, "pause");
  }

  @Test
  void shouldDecodeQueryParametersWhenPresent() {
    ApiRequest request =
        ApiRequest.of("GET", URI.create("/schedules?limit=5&after=a%2Bb&flag"), new byte[0], true);
    assertThat(request.param("limit")).hasValue("5");
    assertThat(request.param("after")).hasValue("a+b");
    assertThat(request.param("flag")).hasValue("");
    assertThat(request.forwarded()).isTrue();
  }
}
