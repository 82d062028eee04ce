package dev.kdelay.service.faults;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The default seed of a fault test class, which {@link FaultExtension} hands out as {@link
 * FaultRun#seed()}. A system property replays another seed without a code change.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@interface FaultSeed {

  /** The seed when the property is not set. */
  long value();

  /** The system property that overrides it. */
  String property() default "kdelay.faults.seed";
}
