package dev.kdelay.schemas;

/**
 * Values for kdelay's one-line {@code event=... key=value} log lines.
 *
 * <p>Schedule ids, topics and error messages come from users and may hold spaces, quotes or line
 * breaks. Written raw they would split a line or fake a field, so {@link #quote} leaves a plain
 * token as it is and writes anything else as a double-quoted string with escapes.
 */
public final class LogValues {

  private LogValues() {}

  /**
   * The value as it appears after {@code key=}: unchanged when it is a non-empty run of letters,
   * digits and {@code . _ - : / @ +}; otherwise in double quotes, with {@code "} and {@code \}
   * escaped by a backslash and control characters written as {@code \n}, {@code \r}, {@code \t} or
   * {@code \}{@code uXXXX}. {@code null} is written as {@code -}.
   */
  public static String quote(String value) {
    if (value == null) {
      return "-";
    }
    if (plain(value)) {
      return value;
    }
    StringBuilder quoted = new StringBuilder(value.length() + 8).append('"');
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '"' -> quoted.append("\\\"");
        case '\\' -> quoted.append("\\\\");
        case '\n' -> quoted.append("\\n");
        case '\r' -> quoted.append("\\r");
        case '\t' -> quoted.append("\\t");
        default -> {
          if (Character.isISOControl(c)) {
            quoted.append(String.format("\\u%04x", (int) c));
          } else {
            quoted.append(c);
          }
        }
      }
    }
    return quoted.append('"').toString();
  }

  /** {@link #quote} of the text of an exception: its class and message. */
  public static String quote(Throwable error) {
    return quote(error == null ? null : error.toString());
  }

  private static boolean plain(String value) {
    if (value.isEmpty()) {
      return false;
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      boolean ok =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || c == '.'
              || c == '_'
              || c == '-'
              || c == ':'
              || c == '/'
              || c == '@'
              || c == '+';
      if (!ok) {
        return false;
      }
    }
    return true;
  }
}
