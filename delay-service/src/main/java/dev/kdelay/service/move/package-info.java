/**
 * Moving a deployment's schedules to another: {@link dev.kdelay.service.move.DeploymentMove}, run
 * by {@code kdelay move}, is how a deployment outgrows its requests topic's partition count.
 */
package dev.kdelay.service.move;
