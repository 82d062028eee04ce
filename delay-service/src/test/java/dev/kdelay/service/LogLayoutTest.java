package dev.kdelay.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.impl.Log4jLogEvent;
import org.apache.logging.log4j.core.layout.PatternLayout;
import org.apache.logging.log4j.message.SimpleMessage;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

/** The service's console layout writes every event, stack traces included, on one line. */
class LogLayoutTest {

  private final PatternLayout layout = serviceLayout();

  @Test
  void aMessageWithLineBreaksStaysOnOneLine() {
    String line = format(event("event=x message=two\nlines\r\nhere", null));

    assertThat(line).endsWith("\n").doesNotContain("\r");
    assertThat(line.substring(0, line.length() - 1)).doesNotContain("\n");
    assertThat(line).contains("event=x message=two\\nlines\\r\\nhere");
  }

  @Test
  void aStackTraceIsWrittenOnTheSameLineAsItsEvent() {
    RuntimeException error = new RuntimeException("boom", new IllegalStateException("cause"));

    String line = format(event("event=failed", error));

    assertThat(line.substring(0, line.length() - 1)).doesNotContain("\n").doesNotContain("\r");
    assertThat(line)
        .contains("event=failed")
        .contains("java.lang.RuntimeException: boom")
        .contains("Caused by: java.lang.IllegalStateException: cause")
        .contains("LogLayoutTest");
    // Written once, not repeated by Log4j's automatic exception appending.
    assertThat(line.split("java.lang.RuntimeException: boom", -1)).hasSize(2);
  }

  @Test
  void anEventWithoutAnErrorHasNoTrailingField() {
    String line = format(event("event=quiet", null));

    assertThat(line).endsWith(" - event=quiet\n");
  }

  private String format(LogEvent event) {
    return layout.toSerializable(event);
  }

  private static LogEvent event(String message, Throwable error) {
    return Log4jLogEvent.newBuilder()
        .setLoggerName("dev.kdelay.service.Test")
        .setLevel(Level.ERROR)
        .setMessage(new SimpleMessage(message))
        .setThrown(error)
        .setThreadName("main")
        .setTimeMillis(0)
        .build();
  }

  /** The layout of {@code log4j2.xml}'s console appender, as the service configures it. */
  private static PatternLayout serviceLayout() {
    try (InputStream xml = LogLayoutTest.class.getResourceAsStream("/log4j2.xml")) {
      Element layout =
          (Element)
              DocumentBuilderFactory.newInstance()
                  .newDocumentBuilder()
                  .parse(xml)
                  .getElementsByTagName("PatternLayout")
                  .item(0);
      return PatternLayout.newBuilder()
          .withPattern(layout.getAttribute("pattern"))
          .withAlwaysWriteExceptions(!"false".equals(layout.getAttribute("alwaysWriteExceptions")))
          .build();
    } catch (Exception e) {
      throw new AssertionError("cannot read log4j2.xml", e);
    }
  }
}
