package dev.kdelay.benchmarks.textbook;

/**
 * The key of a fired record on its way to the sink: the target topic travels with the key bytes,
 * for the sink's topic extractor.
 *
 * @param topic the target topic
 * @param id the record key: the schedule id
 */
record RoutedKey(String topic, byte[] id) {}
