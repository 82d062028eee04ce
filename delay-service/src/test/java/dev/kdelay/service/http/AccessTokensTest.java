package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kdelay.service.http.AccessTokens.Role;
import java.util.HexFormat;
import java.util.List;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class AccessTokensTest {

  private static String sha256(String token) {
    return "sha256:" + HexFormat.of().formatHex(AccessTokens.sha256(token));
  }

  @Test
  void shouldGiveEachTokenItsRoleWhenListedPlainOrHashed() {
    AccessTokens tokens =
        AccessTokens.parse(
            List.of(
                "# operators",
                "",
                "read " + sha256("reader-token-long-enough-for-24"),
                "  write   writer-token-long-enough-for-24  ",
                "peer peer-token-long-enough-for-24"),
            "tokens");

    assertThat(tokens.configured()).isTrue();
    assertThat(tokens.roleOf("reader-token-long-enough-for-24")).contains(Role.READ);
    assertThat(tokens.roleOf("writer-token-long-enough-for-24")).contains(Role.WRITE);
    assertThat(tokens.roleOf("peer-token-long-enough-for-24")).contains(Role.PEER);
    assertThat(tokens.roleOf("reader-token-long-enough-for-24 ")).isEmpty();
    assertThat(tokens.roleOf("unknown")).isEmpty();
  }

  @Test
  void shouldGiveATokenListedWithATenantThatTenantOnly() {
    AccessTokens tokens =
        AccessTokens.parse(
            List.of(
                "write teama-token-long-enough-for-24 orders tenant=teama",
                "read " + sha256("teamb-token-long-enough-for-24") + " tenant=teamb",
                "write operator-token-long-enough-for-24 ops",
                "peer peer-token-long-enough-for-24"),
            "tokens");

    assertThat(tokens.tenantOf("teama-token-long-enough-for-24")).contains("teama");
    assertThat(tokens.roleOf("teama-token-long-enough-for-24")).contains(Role.WRITE);
    assertThat(tokens.nameOf("teama-token-long-enough-for-24")).isEqualTo("orders");
    assertThat(tokens.tenantOf("teamb-token-long-enough-for-24")).contains("teamb");
    assertThat(tokens.roleOf("teamb-token-long-enough-for-24")).contains(Role.READ);
    assertThat(tokens.tenantOf("operator-token-long-enough-for-24")).isEmpty();
    assertThat(tokens.tenantOf("peer-token-long-enough-for-24")).isEmpty();
    assertThat(tokens.tenantOf("unlisted-token-long-enough-for-24")).isEmpty();
    assertThat(tokens.tenants()).containsExactly("teama", "teamb");
  }

  @Test
  void shouldRefuseATenantOnAPeerTokenABadTenantNameAndOneTokenForTwoTenants() {
    String peer = "peer p-token-long-enough-for-24";
    for (List<String> lines :
        List.of(
            List.of("peer p-token-long-enough-for-24 tenant=teama"),
            List.of("write w-token-long-enough-for-24 tenant=Team-A", peer),
            List.of("write w-token-long-enough-for-24 tenant=", peer),
            List.of(
                "write w-token-long-enough-for-24 tenant=teama",
                "write w-token-long-enough-for-24 tenant=teamb",
                peer),
            List.of(
                "write w-token-long-enough-for-24 tenant=teama",
                "write w-token-long-enough-for-24",
                peer))) {
      assertThatThrownBy(() -> AccessTokens.parse(lines, "f"))
          .as("%s", lines)
          .isInstanceOf(ConfigException.class)
          .hasMessageContaining("line ")
          .hasMessageNotContaining("w-token")
          .hasMessageNotContaining("p-token");
    }
  }

  @Test
  void shouldSendTheFirstPeerTokenToPeersAndNeverAWriteToken() {
    AccessTokens tokens =
        AccessTokens.parse(
            List.of(
                "write w1-token-long-enough-for-24",
                "peer p-token-long-enough-for-24",
                "peer p2-token-long-enough-for-24"),
            "f");

    assertThat(tokens.peerToken()).contains("p-token-long-enough-for-24");
    assertThat(tokens.forwardsWith(Role.PEER)).isTrue();
    assertThat(tokens.forwardsWith(Role.WRITE)).isFalse();
    assertThat(Role.PEER.mayWrite()).isFalse();
  }

  @Test
  void shouldRefuseAFileWithoutAPlainPeerToken() {
    for (List<String> lines :
        List.of(
            List.of("write w1-token-long-enough-for-24", "read r1-token-long-enough-for-24"),
            List.of("write w1-token-long-enough-for-24", "peer " + sha256("p"))))
      assertThatThrownBy(() -> AccessTokens.parse(lines, "f"))
          .isInstanceOf(ConfigException.class)
          .hasMessageContaining("delay.http.auth.tokens.file")
          .hasMessageContaining("needs a peer token in plain text");
  }

  @Test
  void shouldRefuseATokenGivenTwoRoles() {
    assertThatThrownBy(
            () ->
                AccessTokens.parse(
                    List.of(
                        "peer p-token-long-enough-for-24",
                        "write " + sha256("p-token-long-enough-for-24")),
                    "f"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("line 2")
        .hasMessageNotContaining("p-token");
  }

  @Test
  void shouldNameTheLineButNeverTheTokenWhenALineIsMalformed() {
    assertThatThrownBy(
            () ->
                AccessTokens.parse(
                    List.of("peer ok-token-long-enough-for-24", "admin s3cret-value"), "f"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("line 2")
        .hasMessageNotContaining("s3cret-value");
    assertThatThrownBy(
            () ->
                AccessTokens.parse(
                    List.of("write ok-token-long-enough-for-24", "read sha256:abc"), "f"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("64 hex digits");
  }

  @Test
  void shouldRefuseAPlainTokenShorterThanTheMinimumWithoutShowingIt() {
    assertThatThrownBy(
            () ->
                AccessTokens.parse(
                    List.of("peer w1-token-long-enough-for-24", "read short-token-23-chars"), "f"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("line 2")
        .hasMessageContaining("fewer than 24 characters")
        .hasMessageNotContaining("short-token");
    assertThat(AccessTokens.parse(List.of("peer " + "x".repeat(24)), "f").configured()).isTrue();
  }

  @Test
  void shouldCallATokenByItsNameWhenItsLineGivesOneAndByItsDigestElse() {
    AccessTokens tokens =
        AccessTokens.parse(
            List.of(
                "write orders-token-long-enough-for-24 orders-team",
                "read " + sha256("dash-token-long-enough-for-24") + " dashboards.v2",
                "peer peer-token-long-enough-for-24"),
            "f");

    assertThat(tokens.nameOf("orders-token-long-enough-for-24")).isEqualTo("orders-team");
    assertThat(tokens.roleOf("orders-token-long-enough-for-24")).contains(Role.WRITE);
    assertThat(tokens.nameOf("dash-token-long-enough-for-24")).isEqualTo("dashboards.v2");
    assertThat(tokens.nameOf("peer-token-long-enough-for-24"))
        .isEqualTo(sha256("peer-token-long-enough-for-24").substring(0, "sha256:".length() + 8));
    assertThat(tokens.nameOf("not-listed-token-long-enough")).isEqualTo("unlisted");
  }

  @Test
  void shouldRefuseANameThatCouldForgeALogFieldOrThatTwoTokensShare() {
    assertThatThrownBy(
            () -> AccessTokens.parse(List.of("peer p-token-long-enough-for-24 role=write"), "f"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("line 1 has a name that is not");
    assertThatThrownBy(
            () ->
                AccessTokens.parse(
                    List.of(
                        "peer p-token-long-enough-for-24 ops",
                        "write w-token-long-enough-for-24 ops"),
                    "f"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("line 2 gives a name another line gives")
        .hasMessageNotContaining("w-token");
    assertThatThrownBy(
            () -> AccessTokens.parse(List.of("peer p-token-long-enough-for-24 ops extra"), "f"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'ROLE TOKEN [NAME] [tenant=TENANT]'");
  }

  @Test
  void shouldRefuseAFileWhenItHoldsNoToken() {
    assertThatThrownBy(() -> AccessTokens.parse(List.of("# nothing", ""), "f"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("holds no token");
  }

  @Test
  void shouldNeverShowTokensWhenPrinted() {
    assertThat(AccessTokens.parse(List.of("peer s3cret-token-long-enough-for-24"), "f").toString())
        .doesNotContain("s3cret");
  }
}
