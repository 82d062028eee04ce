package dev.kdelay.service.cli;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The arguments of one CLI command: {@code --name value} or {@code --name=value} options, flags,
 * and positional arguments; {@code --} ends the options.
 */
public final class CommandLine {

  /** Exit code: success. */
  public static final int OK = 0;

  /** Exit code: failure (invalid configuration, Kafka unreachable, an error while running). */
  public static final int FAILED = 1;

  /** Exit code: the command line is wrong. */
  public static final int USAGE = 2;

  private final Map<String, String> options;
  private final Set<String> flags;
  private final List<String> positionals;

  private CommandLine(Map<String, String> options, Set<String> flags, List<String> positionals) {
    this.options = options;
    this.flags = flags;
    this.positionals = positionals;
  }

  /**
   * Parses arguments.
   *
   * @param args the arguments after the command name
   * @param valueOptions options that take a value, such as {@code --id}
   * @param flagOptions options that take none, such as {@code --from-beginning}
   * @throws UsageException on an unknown option, a missing value or a repeated option
   */
  public static CommandLine parse(
      List<String> args, Set<String> valueOptions, Set<String> flagOptions) {
    Map<String, String> options = new HashMap<>();
    Set<String> flags = new HashSet<>();
    List<String> positionals = new ArrayList<>();
    boolean optionsEnded = false;
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (optionsEnded || !arg.startsWith("--")) {
        positionals.add(arg);
      } else if (arg.equals("--")) {
        optionsEnded = true;
      } else {
        int equals = arg.indexOf('=');
        String name = equals < 0 ? arg : arg.substring(0, equals);
        if (flagOptions.contains(name)) {
          if (equals >= 0) {
            throw new UsageException("option " + name + " takes no value");
          }
          flags.add(name);
        } else if (valueOptions.contains(name)) {
          String value;
          if (equals >= 0) {
            value = arg.substring(equals + 1);
          } else if (i + 1 < args.size()) {
            value = args.get(++i);
          } else {
            throw new UsageException("option " + name + " needs a value");
          }
          if (options.putIfAbsent(name, value) != null) {
            throw new UsageException("option " + name + " is given twice");
          }
        } else {
          throw new UsageException("unknown option " + name);
        }
      }
    }
    return new CommandLine(options, flags, positionals);
  }

  public Optional<String> option(String name) {
    return Optional.ofNullable(options.get(name));
  }

  String required(String name) {
    return option(name).orElseThrow(() -> new UsageException("option " + name + " is required"));
  }

  boolean flag(String name) {
    return flags.contains(name);
  }

  List<String> positionals() {
    return positionals;
  }

  /**
   * The single positional argument.
   *
   * @param what what it is, for the error message, such as {@code VALUE}
   * @throws UsageException if there is none or more than one
   */
  String singlePositional(String what) {
    if (positionals.size() != 1) {
      throw new UsageException(
          "expected exactly one " + what + ", got " + positionals.size() + ": " + positionals);
    }
    return positionals.get(0);
  }

  /** Fails if any positional argument was given. */
  public void requireNoPositionals() {
    if (!positionals.isEmpty()) {
      throw new UsageException("unexpected arguments: " + positionals);
    }
  }
}
