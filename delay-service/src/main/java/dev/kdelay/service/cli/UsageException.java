package dev.kdelay.service.cli;

/** The command line is wrong; the CLI prints the message and the usage and exits with 2. */
public final class UsageException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public UsageException(String message) {
    super(message);
  }
}
