import type { NamespaceName } from '@ledgerline/naming';
import { LedgerlineError, unexpectedRejection } from '@ledgerline/errors';
import type { AdminContext } from '../admin-context.js';
import { retryOnConflict } from '../records/cas-retry.js';
import { MAX_PENDING_RESERVATIONS } from '../limits.js';
import { applyReservations, type ReservationRequest } from './topic-counter.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

interface Pending {
  request: ReservationRequest;
  resolve(granted: number): void;
  reject(error: unknown): void;
}

interface NamespaceQueue {
  namespace: NamespaceName;
  pending: Pending[];
  running: boolean;
}

/**
 * Reserves and releases topic slots on namespace counters. Concurrent calls in
 * this process for one namespace are combined into one compare-and-set, so a
 * hundred parallel creates cost a few counter writes rather than a hundred
 * conflicting ones; instances still compete through the store's versions,
 * which is what keeps the limit exact across instances.
 */
export class TopicReservations {
  readonly #context: AdminContext;
  readonly #queues = new Map<string, NamespaceQueue>();

  constructor(context: AdminContext) {
    this.#context = context;
  }

  /** Reserves up to `slots` (all or none when `allOrNothing`); resolves with the slots granted. */
  reserve(namespace: NamespaceName, slots: number, allOrNothing: boolean): Promise<number> {
    if (slots <= 0) return Promise.resolve(0);
    return this.#enqueue(namespace, { delta: slots, allOrNothing });
  }

  /** Gives slots back (a create that failed after reserving, a deleted topic). */
  async release(namespace: NamespaceName, slots: number): Promise<void> {
    if (slots > 0) await this.#enqueue(namespace, { delta: -slots, allOrNothing: false });
  }

  /**
   * Rewrites the counter unchanged before a deletion takes topics away. A
   * recount writes only a counter that has been still for the settle time and
   * did not change while it counted; without this, a recount could count a
   * topic already marked deleted, then the deletion's release would take the
   * same slot off a second time and leave the counter below the real count.
   */
  async touch(namespace: NamespaceName): Promise<void> {
    await this.#enqueue(namespace, { delta: 0, allOrNothing: false, touch: true });
  }

  #enqueue(namespace: NamespaceName, request: ReservationRequest): Promise<number> {
    const key = namespace.toString();
    let queue = this.#queues.get(key);
    if (queue === undefined) {
      queue = { namespace, pending: [], running: false };
      this.#queues.set(key, queue);
    }
    if (queue.pending.length >= MAX_PENDING_RESERVATIONS) {
      return Promise.reject(
        new LedgerlineError(
          'RESOURCE_EXHAUSTED',
          MetadataServiceReason.RESERVATION_QUEUE_FULL,
          `${MAX_PENDING_RESERVATIONS} topic creations are already waiting on namespace ${key}; retry later`,
        ),
      );
    }
    const promise = new Promise<number>((resolve, reject) => queue.pending.push({ request, resolve, reject }));
    if (!queue.running) this.#drain(key, queue).catch(unexpectedRejection);
    return promise;
  }

  async #drain(key: string, queue: NamespaceQueue): Promise<void> {
    queue.running = true;
    while (queue.pending.length > 0) {
      const batch = queue.pending.splice(0, queue.pending.length);
      try {
        const granted = await retryOnConflict(`reserving topics in ${key}`, () =>
          applyReservations(
            this.#context,
            queue.namespace,
            batch.map((pending) => pending.request),
          ),
        );
        batch.forEach((pending, index) => pending.resolve(granted[index]!));
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    }
    queue.running = false;
    this.#queues.delete(key);
  }
}
