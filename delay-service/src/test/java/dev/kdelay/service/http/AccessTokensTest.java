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
                "read " + sha256("reader-token"),
                "  write   writer-token  ",
                "peer peer-token"),
            "tokens");

    assertThat(tokens.configured()).isTrue();
    assertThat(tokens.roleOf("reader-token")).contains(Role.READ);
    assertThat(tokens.roleOf("writer-token")).contains(Role.WRITE);
    assertThat(tokens.roleOf("peer-token")).contains(Role.PEER);
    assertThat(tokens.roleOf("reader-token ")).isEmpty();
    assertThat(tokens.roleOf("unknown")).isEmpty();
  }

  @Test
  void shouldSendThePeerTokenToPeersWhenThereIsOneElseTheFirstPlainWriteToken() {
    assertThat(AccessTokens.parse(List.of("write w1", "peer p", "write w2"), "f").peerToken())
        .contains("p");
    assertThat(
            AccessTokens.parse(List.of("write " + sha256("w0"), "write w1", "write w2"), "f")
                .peerToken())
        .contains("w1");
  }

  @Test
  void shouldRefuseAFileWhenNoPlainTokenIsLeftForPeers() {
    assertThatThrownBy(() -> AccessTokens.parse(List.of("write " + sha256("w")), "f"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("delay.http.auth.tokens.file")
        .hasMessageContaining("peer or write token in plain text");
  }

  @Test
  void shouldNameTheLineButNeverTheTokenWhenALineIsMalformed() {
    assertThatThrownBy(() -> AccessTokens.parse(List.of("write ok", "admin s3cret-value"), "f"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("line 2")
        .hasMessageNotContaining("s3cret-value");
    assertThatThrownBy(() -> AccessTokens.parse(List.of("write ok", "read sha256:abc"), "f"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("64 hex digits");
  }

  @Test
  void shouldRefuseAFileWhenItHoldsNoToken() {
    assertThatThrownBy(() -> AccessTokens.parse(List.of("# nothing", ""), "f"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("holds no token");
  }

  @Test
  void shouldNeverShowTokensWhenPrinted() {
    assertThat(AccessTokens.parse(List.of("write s3cret"), "f").toString())
        .doesNotContain("s3cret");
  }
}
