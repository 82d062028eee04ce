package dev.kdelay.schemas;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TenantIdsTest {

  @Test
  void shouldSplitAQualifiedIdIntoItsTenantAndTheIdAsSent() {
    String kept = TenantIds.qualified("teama", "order-1");

    assertThat(TenantIds.isQualified(kept)).isTrue();
    assertThat(TenantIds.split(kept)).contains(new TenantIds.Split("teama", "order-1"));
    assertThat(new String(TenantIds.qualified("teama", "order-1".getBytes(UTF_8)), UTF_8))
        .isEqualTo(kept);
    assertThat(TenantIds.idBytes(kept.getBytes(UTF_8))).isEqualTo("order-1".getBytes(UTF_8));
  }

  @Test
  void shouldKeepAnIdThatHasTheMarkInsideItWhole() {
    String kept = TenantIds.qualified("teama", "a\u0000b");

    assertThat(TenantIds.idOf(kept)).isEqualTo("a\u0000b");
    assertThat(TenantIds.idBytes(kept.getBytes(UTF_8))).isEqualTo("a\u0000b".getBytes(UTF_8));
  }

  @Test
  void shouldTakeAPlainIdAsNoTenantsAndItselfWhole() {
    assertThat(TenantIds.split("order-1")).contains(new TenantIds.Split("", "order-1"));
    assertThat(TenantIds.tenantOf("order-1")).isEmpty();
    assertThat(TenantIds.idBytes("order-1".getBytes(UTF_8))).isEqualTo("order-1".getBytes(UTF_8));
  }

  @Test
  void shouldFindNoTenantInAnIdThatStartsWithTheMarkButIsNotQualified() {
    for (String odd :
        new String[] {
          "\u0000", "\u0000teama", "\u0000teama\u0000", "\u0000Team\u0000x", "\u0000\u0000x"
        }) {
      assertThat(TenantIds.split(odd)).as(odd.replace('\u0000', '|')).isEmpty();
      assertThat(TenantIds.tenantOf(odd)).isEmpty();
      assertThat(TenantIds.idOf(odd)).isEqualTo(odd);
    }
  }
}
