/**
 * The service's HTTP side: the endpoint and its two lanes ({@link
 * dev.kdelay.service.http.HttpEndpoint}), who may do what ({@link
 * dev.kdelay.service.http.HttpAccess}), the admin API's routes ({@link
 * dev.kdelay.service.http.AdminApi}) and the reads it answers from the state stores of whichever
 * instance holds them ({@link dev.kdelay.service.http.ScheduleQueries}).
 *
 * <p>{@link dev.kdelay.service.DelayService} builds these and hands them what they need; nothing
 * here starts Kafka clients of its own.
 */
package dev.kdelay.service.http;
