/**
 * What people type, read alike by the command line and the HTTP API: durations and instants ({@link
 * dev.kdelay.service.input.TimeArguments}) in the wire contract's formats plus the short forms
 * people use ({@code 30s}, {@code 5m}).
 *
 * <p>Not part of the wire contract: a producer's header is read by {@link
 * dev.kdelay.schemas.WireTimes} alone, and only what is typed at kdelay's own front ends is read
 * more leniently.
 */
package dev.kdelay.service.input;
