package dev.kdelay.service.topics;

import java.util.Collection;

/**
 * Told of target topics that exist, so that the producers which will write to them fetch their
 * metadata ahead of the fires instead of on the stream thread at the first fire.
 */
@FunctionalInterface
public interface TopicMetadataWarmer {

  /** Warms nothing. */
  TopicMetadataWarmer NONE = topics -> {};

  /**
   * Has the producers learn these topics' metadata, in the background; returns at once.
   *
   * @param topics topics that exist
   */
  void warm(Collection<String> topics);
}
