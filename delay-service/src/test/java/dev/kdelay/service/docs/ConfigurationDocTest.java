package dev.kdelay.service.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.RepositoryFiles;
import dev.kdelay.service.config.ServiceConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Keeps {@code docs/configuration.md} and the {@code ConfigDef}s that define the keys in step: the
 * key reference in the document is what {@link ConfigurationReference} renders from {@link
 * ServiceConfig#configDef()}, so a key added, removed, renamed or redocumented in the code fails
 * this test until the document is regenerated.
 *
 * <p>To regenerate, run this test with {@code -Dkdelay.docs.regenerate=true}: it rewrites the part
 * between the markers and leaves the hand-written text around it alone.
 */
class ConfigurationDocTest {

  static final String REGENERATE = "kdelay.docs.regenerate";

  static final String COMMAND =
      "mvn -B -ntp test -pl delay-service -am -Dtest=ConfigurationDocTest"
          + " -Dsurefire.failIfNoSpecifiedTests=false -D"
          + REGENERATE
          + "=true";

  private static final Path DOC = Path.of("docs", "configuration.md");

  @Test
  void shouldMatchTheConfigDefsWhenTheKeyReferenceIsRendered() throws IOException {
    // given
    Path file = RepositoryFiles.root().resolve(DOC);
    String document = Files.readString(file, StandardCharsets.UTF_8);
    int begin = document.indexOf(ConfigurationReference.BEGIN);
    int end = document.indexOf(ConfigurationReference.END);
    assertThat(begin).as("the BEGIN marker in %s", DOC).isNotNegative();
    assertThat(end).as("the END marker after the BEGIN marker in %s", DOC).isGreaterThan(begin);
    String head = document.substring(0, begin + ConfigurationReference.BEGIN.length()) + "\n";
    String tail = document.substring(end);

    // when
    String rendered = ConfigurationReference.render();

    // then
    if (Boolean.getBoolean(REGENERATE)) {
      Files.writeString(file, head + rendered + tail, StandardCharsets.UTF_8);
    }
    String written = Files.readString(file, StandardCharsets.UTF_8);
    assertThat(written.substring(head.length(), written.indexOf(ConfigurationReference.END)))
        .as("%s has drifted from ServiceConfig.configDef(); regenerate it with: %s", DOC, COMMAND)
        .isEqualTo(rendered);
  }

  @Test
  void shouldListEveryKeyOnceWhenRendered() {
    String rendered = ConfigurationReference.render();

    for (String key : ServiceConfig.configDef().names()) {
      assertThat(rendered)
          .as("the row of %s", key)
          .containsOnlyOnce("| `" + key + "` (`" + ConfigurationReference.environmentVariable(key));
    }
  }
}
