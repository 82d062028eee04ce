/**
 * Topic administration: what the service asks of Kafka's admin client about topics.
 *
 * <ul>
 *   <li>At start, kdelay's own topics ({@link dev.kdelay.service.topics.RequiredTopics}): created
 *       with the {@link dev.kdelay.service.topics.TopicDurability} computed for the cluster,
 *       awaited until usable on every broker ({@link dev.kdelay.service.topics.TopicPropagation}),
 *       and those an operator may have changed checked ({@link
 *       dev.kdelay.service.topics.ChangelogTopics}, {@link
 *       dev.kdelay.service.topics.DeadLetterRetention}), all within one {@link
 *       dev.kdelay.service.topics.StartupDeadline}.
 *   <li>While running, the target topics that schedules name ({@link
 *       dev.kdelay.service.topics.AdminTargetTopics}): read in batches ({@link
 *       dev.kdelay.service.topics.TopicLimitsReader}), cached ({@link
 *       dev.kdelay.service.topics.TargetTopicCache}) and handed to a {@link
 *       dev.kdelay.service.topics.TopicMetadataWarmer} so that the producers know them before the
 *       first fire.
 * </ul>
 *
 * <p>{@link dev.kdelay.service.DelayService} uses the two entry points; everything else here is
 * package-private.
 */
package dev.kdelay.service.topics;
