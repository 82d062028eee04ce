package dev.kdelay.schemas;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.parser.CronParser;
import java.util.EnumMap;
import java.util.Map;

/** Parses cron expressions of each {@link CronFlavor} with cron-utils. Thread-safe. */
public final class CronExpressions {

  private static final Map<CronFlavor, CronParser> PARSERS = new EnumMap<>(CronFlavor.class);

  static {
    PARSERS.put(CronFlavor.QUARTZ, parserFor(CronType.QUARTZ));
    PARSERS.put(CronFlavor.UNIX, parserFor(CronType.UNIX));
    PARSERS.put(CronFlavor.SPRING, parserFor(CronType.SPRING53));
  }

  private CronExpressions() {}

  /**
   * Parses and validates an expression.
   *
   * @param expression the cron expression
   * @param flavor its dialect
   * @return the parsed expression
   * @throws IllegalArgumentException with cron-utils' explanation if the expression is invalid
   */
  public static Cron parse(String expression, CronFlavor flavor) {
    try {
      return PARSERS.get(flavor).parse(expression).validate();
    } catch (IllegalArgumentException e) {
      throw e;
    } catch (RuntimeException e) {
      // cron-utils throws other unchecked exceptions on some malformed input ("1#", say).
      throw new IllegalArgumentException("malformed expression (" + e + ")", e);
    }
  }

  private static CronParser parserFor(CronType type) {
    return new CronParser(CronDefinitionBuilder.instanceDefinitionFor(type));
  }
}
