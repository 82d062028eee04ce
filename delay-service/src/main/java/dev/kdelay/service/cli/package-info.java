/**
 * The small command line over the SDK that {@code bin/kdelay} offers besides {@code run}: {@code
 * schedule}, {@code cancel}, {@code pause}, {@code resume} and {@code watch}. {@link
 * dev.kdelay.service.Main} parses the command and hands it one of these.
 */
package dev.kdelay.service.cli;
