/**
 * Warming the fire path before readiness turns green: synthetic tasks run through kdelay's own
 * topology against a local sink ({@link dev.kdelay.service.warmup.FirePathWarmup}, {@link
 * dev.kdelay.service.warmup.ProducerSink}), and the producers Kafka Streams creates given the
 * target topics' metadata before their first fire ({@link
 * dev.kdelay.service.warmup.WarmingClientSupplier}).
 */
package dev.kdelay.service.warmup;
