package dev.kdelay.topology;

import java.util.Objects;
import java.util.function.Function;

/**
 * What reading stored bytes gave: the value, or why the bytes cannot be decoded (a corrupt state
 * store, or state written by a newer kdelay). Readers branch on it instead of catching the
 * decoders' exceptions.
 *
 * <pre>{@code
 * switch (store.view(id)) {
 *   case Decoded.Readable<ScheduleView> r -> show(r.value());
 *   case Decoded.Unreadable<ScheduleView> u -> report(u.error());
 * }
 * }</pre>
 *
 * @param <T> the type of the decoded value
 */
public sealed interface Decoded<T> {

  /**
   * Bytes that decoded.
   *
   * @param value the decoded value
   * @param <T> its type
   */
  record Readable<T>(T value) implements Decoded<T> {
    /** Creates a result. */
    public Readable {
      Objects.requireNonNull(value, "value cannot be null");
    }
  }

  /**
   * Bytes that did not decode.
   *
   * @param error why, for operators: the decoder's message
   * @param <T> the type the bytes should have decoded to
   */
  record Unreadable<T>(String error) implements Decoded<T> {
    /** Creates a result. */
    public Unreadable {
      Objects.requireNonNull(error, "error cannot be null");
    }
  }

  /** A readable result. */
  static <T> Decoded<T> readable(T value) {
    return new Readable<>(value);
  }

  /** An unreadable result. */
  static <T> Decoded<T> unreadable(String error) {
    return new Unreadable<>(error);
  }

  /** Whether the bytes decoded. */
  default boolean isReadable() {
    return this instanceof Readable<T>;
  }

  /**
   * The decoded value.
   *
   * @throws IllegalStateException if the bytes did not decode
   */
  default T value() {
    if (this instanceof Readable<T> readable) {
      return readable.value();
    }
    throw new IllegalStateException("unreadable: " + ((Unreadable<T>) this).error());
  }

  /** The same result with the value mapped; an unreadable one stays unreadable. */
  default <R> Decoded<R> map(Function<? super T, ? extends R> mapper) {
    if (this instanceof Readable<T> readable) {
      return new Readable<>(mapper.apply(readable.value()));
    }
    return new Unreadable<>(((Unreadable<T>) this).error());
  }
}
