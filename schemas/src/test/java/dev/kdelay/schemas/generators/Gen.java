package dev.kdelay.schemas.generators;

import java.util.function.Function;

/**
 * Generates a value from {@link Choices}; smaller choices must give simpler values, so that a
 * failing case shrinks to a readable one.
 *
 * @param <T> what it generates
 */
@FunctionalInterface
public interface Gen<T> {

  /** A value made of the next choices. */
  T next(Choices choices);

  /** This generator's values, mapped. */
  default <R> Gen<R> map(Function<? super T, ? extends R> mapping) {
    return choices -> mapping.apply(next(choices));
  }

  /** Null now and then (the simplest), this generator's value otherwise. */
  default Gen<T> orNull(int percentPresent) {
    return choices -> choices.chance(percentPresent) ? next(choices) : null;
  }
}
