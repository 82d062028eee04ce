package dev.kdelay.service.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kdelay.service.RepositoryFiles;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Checks every relative link and {@code #anchor} of the project's documentation: {@code README.md},
 * {@code benchmarks/README.md} and every Markdown file under {@code docs/}. A link must name a file
 * or directory of the repository, and an anchor a heading of its Markdown file, written as GitHub
 * writes heading anchors (lower case, punctuation dropped, each space a hyphen, {@code -1}, {@code
 * -2} after a repeated heading). Links with a scheme ({@code https:}) are not followed; text in
 * code blocks and code spans is not a link.
 */
class DocLinksTest {

  private static final Pattern FENCE = Pattern.compile("^\\s{0,3}(```|~~~)");

  private static final Pattern CODE_SPAN = Pattern.compile("(`+)(.+?)\\1");

  private static final Pattern INLINE_LINK =
      Pattern.compile("!?\\[[^\\]]*]\\(\\s*<?([^)\\s>]*)>?(?:\\s+\"[^\"]*\")?\\s*\\)");

  private static final Pattern REFERENCE_DEFINITION =
      Pattern.compile("^\\s{0,3}\\[[^\\]]+]:\\s*<?(\\S+?)>?(?:\\s+\"[^\"]*\")?\\s*$");

  private static final Pattern HEADING =
      Pattern.compile("^\\s{0,3}(#{1,6})\\s+(.*?)(?:\\s+#+)?\\s*$");

  private static final Pattern HTML_ANCHOR =
      Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"", Pattern.CASE_INSENSITIVE);

  private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:");

  private final Path root = RepositoryFiles.root();

  private final Map<Path, Set<String>> anchors = new HashMap<>();

  @Test
  void shouldResolveEveryRelativeLinkAndAnchorOfTheDocs() throws IOException {
    List<Path> documents = documents();
    assertThat(documents).as("the documents checked").contains(root.resolve("README.md"));

    List<String> broken = new ArrayList<>();
    for (Path document : documents) {
      List<String> lines = prose(document);
      for (int i = 0; i < lines.size(); i++) {
        for (String target : targets(lines.get(i))) {
          String problem = check(document, target);
          if (problem != null) {
            broken.add(root.relativize(document) + ":" + (i + 1) + ": " + target + ": " + problem);
          }
        }
      }
    }

    assertThat(broken).as("broken links").isEmpty();
  }

  @Test
  void shouldWriteAnchorsAsGitHubDoesWhenHeadingsHavePunctuationAndCode() {
    assertThat(slug("Manual actions: trigger now and reschedule"))
        .isEqualTo("manual-actions-trigger-now-and-reschedule");
    assertThat(slug("Upgrading to store format 3")).isEqualTo("upgrading-to-store-format-3");
    assertThat(slug("`delay.fire.commit.interval.ms` and the `read_committed` view"))
        .isEqualTo("delayfirecommitintervalms-and-the-read_committed-view");
    assertThat(slug("Keys of the service (`ServiceConfig`)"))
        .isEqualTo("keys-of-the-service-serviceconfig");
    assertThat(slug("A [linked](other.md#x) heading")).isEqualTo("a-linked-heading");
  }

  private List<Path> documents() throws IOException {
    List<Path> documents = new ArrayList<>();
    documents.add(root.resolve("README.md"));
    documents.add(root.resolve("benchmarks").resolve("README.md"));
    try (Stream<Path> files = Files.walk(root.resolve("docs"))) {
      files.filter(file -> file.toString().endsWith(".md")).sorted().forEach(documents::add);
    }
    return documents;
  }

  /** The problem with one link target, or null if it resolves. */
  private String check(Path document, String target) throws IOException {
    if (target.isEmpty() || SCHEME.matcher(target).find()) {
      return null;
    }
    int hash = target.indexOf('#');
    String path =
        URLDecoder.decode(hash < 0 ? target : target.substring(0, hash), StandardCharsets.UTF_8);
    String anchor = hash < 0 ? null : target.substring(hash + 1);
    Path file = path.isEmpty() ? document : document.getParent().resolve(path).normalize();
    if (!file.startsWith(root)) {
      return "outside the repository";
    }
    if (!Files.exists(file)) {
      return "no such file";
    }
    if (anchor == null) {
      return null;
    }
    if (!file.toString().endsWith(".md")) {
      return "an anchor into a file that is not Markdown";
    }
    Set<String> known = anchors.computeIfAbsent(file, this::anchorsOf);
    return known.contains(anchor) ? null : "no heading with anchor #" + anchor;
  }

  private Set<String> anchorsOf(Path file) {
    Set<String> found = new LinkedHashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    for (String line : prose(file)) {
      Matcher heading = HEADING.matcher(line);
      if (heading.matches()) {
        String slug = slug(heading.group(2));
        int count = seen.merge(slug, 1, Integer::sum);
        found.add(count == 1 ? slug : slug + "-" + (count - 1));
      }
      Matcher html = HTML_ANCHOR.matcher(line);
      while (html.find()) {
        found.add(html.group(1));
      }
    }
    return found;
  }

  /** GitHub's anchor of a heading's text. */
  static String slug(String heading) {
    String text = heading.replaceAll("!?\\[([^\\]]*)]\\([^)]*\\)", "$1").replace("`", "");
    text = text.replaceAll("<[^>]+>", "").toLowerCase(Locale.ROOT);
    StringBuilder slug = new StringBuilder();
    text.codePoints()
        .forEach(
            c -> {
              if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
                slug.appendCodePoint(c);
              } else if (c == ' ') {
                slug.append('-');
              }
            });
    return slug.toString();
  }

  /** The link targets of one line of prose. */
  private static List<String> targets(String line) {
    String text = CODE_SPAN.matcher(line).replaceAll("code");
    List<String> targets = new ArrayList<>();
    Matcher inline = INLINE_LINK.matcher(text);
    while (inline.find()) {
      targets.add(inline.group(1));
    }
    Matcher definition = REFERENCE_DEFINITION.matcher(text);
    if (definition.matches()) {
      targets.add(definition.group(1));
    }
    return targets;
  }

  /** The lines of a file, with those of fenced code blocks blanked, so that numbers still fit. */
  private static List<String> prose(Path file) {
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + file, e);
    }
    List<String> prose = new ArrayList<>(lines.size());
    String fence = null;
    for (String line : lines) {
      Matcher opening = FENCE.matcher(line);
      if (fence == null && opening.find()) {
        fence = opening.group(1);
        prose.add("");
      } else if (fence != null) {
        if (line.strip().startsWith(fence)) {
          fence = null;
        }
        prose.add("");
      } else {
        prose.add(line);
      }
    }
    return prose;
  }
}
