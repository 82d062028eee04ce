/**
 * Consumer retries through kdelay: a record a consumer failed on is scheduled back to its topic
 * after a back-off ({@link dev.kdelay.client.retry.RetryPolicy}), or dead-lettered, without
 * blocking its partition. Start at {@link dev.kdelay.client.retry.RetryHandler}; a consumer reads
 * how many attempts failed before with {@link dev.kdelay.client.retry.RetryHeaders#attempt}.
 */
package dev.kdelay.client.retry;
