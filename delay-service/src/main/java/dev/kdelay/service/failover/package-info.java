/**
 * Failover: what an instance does so that the tasks of an instance that died move and run again
 * sooner than the broker's own timeouts would let them.
 *
 * <ul>
 *   <li>{@link dev.kdelay.service.failover.PeerEviction} removes from the group, within a second, a
 *       peer whose process is gone, instead of waiting out its session timeout;
 *   <li>{@link dev.kdelay.service.failover.OrphanedTransactions} fences, after a rebalance, the
 *       open transaction of the instance whose tasks this one took over, instead of waiting out the
 *       transaction timeout.
 * </ul>
 *
 * <p>Both only shorten a wait: nothing is lost or fired twice without them. They share the admin
 * calls' waiting ({@code AdminCalls}), which is package-private.
 */
package dev.kdelay.service.failover;
