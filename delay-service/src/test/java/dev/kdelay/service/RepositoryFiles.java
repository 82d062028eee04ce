package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

/** Where the repository's own files are, for tests that read or run them. */
public final class RepositoryFiles {

  private RepositoryFiles() {}

  /** The repository's root: the nearest directory above the working one with docker-compose.yml. */
  public static Path root() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !Files.exists(dir.resolve("docker-compose.yml"))) {
      dir = dir.getParent();
    }
    assertThat(dir)
        .as("a directory above the working directory with docker-compose.yml")
        .isNotNull();
    return dir;
  }
}
