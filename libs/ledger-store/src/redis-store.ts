import { LedgerlineError } from '@ledgerline/errors';
import { asBuffer, asBytes } from './bytes.js';
import {
  entryNotConfirmed,
  ledgerClosed,
  ledgerExists,
  ledgerFenced,
  ledgerNotFound,
  LedgerStoreReason,
  storeClosed,
  storeCorrupt,
  storeUnavailable,
} from './errors.js';
import { notifyLacAdvanced } from './lac-hook.js';
import { StoreLedgerWriter, type WriterBackend } from './ledger-writer.js';
import {
  backgroundErrors,
  payloadAllowanceMs,
  disconnectRedis,
  openRedisClient,
  type RedisClient,
} from '@ledgerline/storage-kit';
import { eachLedger, isOvertakenAppend, settle, toInteger, unwrapTransaction } from './redis-replies.js';
import { fromRedisError, scriptReason } from './redis-errors.js';
import { LEDGER_SCRIPTS } from './redis-scripts.js';
import { DEFAULT_REDIS_KEY_PREFIX, RedisKeys } from './redis-keys.js';
import { parseLedgerMeta } from './redis-meta.js';
import { TurnCork } from './redis-turn-cork.js';
import { AppendCommand, AppendScript, isNoScript } from './redis-append-command.js';
import { checkRedisOptions, type RedisLedgerStoreOptions } from './redis-options.js';
import type { LedgerScriptName } from './redis-scripts.js';
import type {
  CreateLedgerOptions,
  LedgerEntry,
  LedgerInfo,
  LedgerStore,
  LedgerStoreLimits,
  LedgerStoreOptions,
  LedgerWriter,
} from './store.js';
import {
  encodeOwnerTags,
  resolveLimits,
  validateAppend,
  validateLedgerBatch,
  validateLedgerId,
  validateListOptions,
  validateReadRange,
} from './validate.js';

/**
 * An append call whose entries average fewer bytes than this sends them
 * packed in one argument (APPEND_PACKED_SCRIPT); larger ones each in its own.
 */
const PACK_BELOW_MEAN_ENTRY_BYTES = 8 * 1024;

type ScriptCall = (...args: (string | Buffer)[]) => Promise<unknown>;

/**
 * The ledger store on Redis (single or Cluster). Append, fence and both
 * closes are Lua scripts over the ledger's two keys, which share a hash tag:
 * each is atomic, and appends from one client run in call order because they
 * travel on one connection.
 *
 * The index of ledger ids sits in another slot, so it cannot change in the
 * same transaction: create registers the id in the index before it creates
 * the ledger, and delete removes the ledger before its index entry. A crash
 * between the two steps leaves an id in the index with no ledger (listed,
 * `info` undefined, cleared by `delete`), never a ledger missing from the
 * index, so an orphan sweep over `list()` sees every ledger. This holds as
 * long as nobody deletes an id while it is being created, which unique ids
 * (the metadata store's ledger-id sequence) guarantee.
 */
export class RedisLedgerStore implements LedgerStore {
  private readonly client: RedisClient;
  private readonly keys: RedisKeys;
  private readonly limits: LedgerStoreLimits;
  private readonly onLacAdvanced: LedgerStoreOptions['onLacAdvanced'];
  private readonly waitReplicas: number;
  private readonly waitTimeoutMs: number;
  private readonly operationTimeoutMs: number;
  /** The appends of one turn, from every ledger this store writes, leave in one socket write. */
  private readonly turn: TurnCork;
  private readonly packedAppend = new AppendScript(
    LEDGER_SCRIPTS.ledgerAppendPacked.lua,
    LEDGER_SCRIPTS.ledgerAppendPacked.numberOfKeys,
  );
  private readonly plainAppend = new AppendScript(
    LEDGER_SCRIPTS.ledgerAppend.lua,
    LEDGER_SCRIPTS.ledgerAppend.numberOfKeys,
  );
  private closed = false;
  /** What writers call: appends and the writer's own close are reachable only through a writer. */
  private readonly writerBackend: WriterBackend = {
    appendEntries: (ledgerId, entries, callNumber) => this.appendEntries(ledgerId, entries, callNumber),
    closeByWriter: (ledgerId) => this.closeByWriter(ledgerId),
  };
  /** The last connection error ioredis reported, for diagnostics. */
  lastConnectionError: Error | undefined;

  constructor(options: RedisLedgerStoreOptions) {
    const checked = checkRedisOptions(options);
    this.keys = new RedisKeys(options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX);
    this.limits = resolveLimits(options.limits);
    this.onLacAdvanced = options.onLacAdvanced;
    this.waitReplicas = checked.waitReplicas;
    this.waitTimeoutMs = checked.waitTimeoutMs;
    // A last resort above ioredis' own bounds: a Cluster queues calls while it rediscovers its slots.
    this.operationTimeoutMs = checked.connectTimeoutMs + checked.commandTimeoutMs;
    const errors = backgroundErrors('ledger-store', options);
    this.client = openRedisClient(options, {
      connectionName: 'ledgerline-ledger-store',
      offlineQueue: true,
      autoPipelining: false,
      errors: {
        report: (kind, error) => {
          this.lastConnectionError = error as Error;
          errors.report(kind, error);
        },
      },
    });
    for (const [name, definition] of Object.entries(LEDGER_SCRIPTS)) this.client.defineCommand(name, definition);
    this.turn = new TurnCork(this.client);
    // Connect now rather than on the first call, so a store that cannot reach Redis says so in its errors early.
    this.client.connect().catch(() => undefined);
  }

  async create(ledgerId: number, options: CreateLedgerOptions = {}): Promise<LedgerWriter> {
    validateLedgerId(ledgerId);
    const tags = encodeOwnerTags(options?.ownerTags);
    await this.call(ledgerId, () => this.client.zadd(this.keys.index, ledgerId, String(ledgerId)));
    await this.call(ledgerId, () => this.script('ledgerCreate')(this.keys.meta(ledgerId), tags, String(Date.now())));
    return new StoreLedgerWriter(ledgerId, this.writerBackend);
  }

  private async appendEntries(ledgerId: number, entries: Uint8Array[], callNumber: number): Promise<number> {
    validateLedgerId(ledgerId);
    const totalBytes = validateAppend(entries, this.limits);
    // Small entries go in one argument (Lua makes one string of each argument); large ones each in their own.
    const packed = entries.length > 1 && totalBytes < entries.length * PACK_BELOW_MEAN_ENTRY_BYTES;
    // The entries' bytes are known from validation: no second pass over the arguments to size the deadline.
    const allowanceMs = payloadAllowanceMs(totalBytes);
    const firstEntryId =
      this.waitReplicas === 0
        ? toInteger(
            await this.call(
              ledgerId,
              () => this.sendAppend(ledgerId, entries, callNumber, packed, totalBytes),
              allowanceMs,
            ),
          )
        : await this.appendAndWait(ledgerId, entries, callNumber, packed, totalBytes, allowanceMs);
    notifyLacAdvanced(this.onLacAdvanced, ledgerId, firstEntryId + entries.length - 1);
    return firstEntryId;
  }

  /**
   * Sends an append with the others of this turn (queued in the corked sockets until the turn ends), its
   * entries written to the socket as they are (AppendCommand); sent again, with the script's source, when the
   * connection does not know the script.
   */
  private sendAppend(
    ledgerId: number,
    entries: readonly Uint8Array[],
    callNumber: number,
    packed: boolean,
    totalBytes: number,
  ): Promise<unknown> {
    const send = (): AppendCommand => {
      const keys = [this.keys.meta(ledgerId), this.keys.entries(ledgerId)];
      const command = packed
        ? new AppendCommand(this.packedAppend, keys, [String(callNumber), entrySizes(entries)], entries, totalBytes)
        : new AppendCommand(this.plainAppend, keys, [String(callNumber)], entries, undefined);
      void this.client.sendCommand(command);
      return command;
    };
    const first = this.turn.send(send);
    return first.promise.catch((thrown: unknown) => {
      if (!isNoScript(thrown)) throw thrown;
      if (first.sentOn !== undefined) first.script.forget(first.sentOn);
      return this.turn.send(send).promise;
    });
  }

  private async closeByWriter(ledgerId: number): Promise<number> {
    validateLedgerId(ledgerId);
    return toInteger(await this.call(ledgerId, () => this.script('ledgerWriterClose')(this.keys.meta(ledgerId))));
  }

  async fence(ledgerId: number): Promise<number> {
    validateLedgerId(ledgerId);
    return toInteger(await this.call(ledgerId, () => this.script('ledgerFence')(this.keys.meta(ledgerId))));
  }

  async closeLedger(ledgerId: number): Promise<number> {
    validateLedgerId(ledgerId);
    return toInteger(await this.call(ledgerId, () => this.script('ledgerCloseLedger')(this.keys.meta(ledgerId))));
  }

  async read(ledgerId: number, firstEntryId: number, lastEntryId: number): Promise<LedgerEntry[]> {
    validateLedgerId(ledgerId);
    const count = validateReadRange(firstEntryId, lastEntryId, this.limits);
    // One MULTI on one slot: the LAC and the entries come from the same instant.
    const [lacReply, entriesReply] = await this.call(ledgerId, async () =>
      unwrapTransaction(
        await this.client
          .multi()
          .hget(this.keys.meta(ledgerId), 'lac')
          .lrangeBuffer(this.keys.entries(ledgerId), firstEntryId, lastEntryId)
          .exec(),
        2,
      ),
    );
    if (lacReply === null) throw ledgerNotFound(ledgerId);
    const lac = toInteger(lacReply);
    if (lastEntryId > lac) throw entryNotConfirmed(ledgerId, lastEntryId, lac);
    const buffers = entriesReply as Buffer[];
    if (buffers.length !== count) {
      throw storeCorrupt(`ledger ${ledgerId} is missing entries between ${firstEntryId} and ${lastEntryId}`);
    }
    return buffers.map((data, i) => ({ entryId: firstEntryId + i, data: asBytes(data) }));
  }

  async lastAddConfirmed(ledgerId: number): Promise<number> {
    validateLedgerId(ledgerId);
    const lac = await this.call(ledgerId, () => this.client.hget(this.keys.meta(ledgerId), 'lac'));
    if (lac === null) throw ledgerNotFound(ledgerId);
    return toInteger(lac);
  }

  async info(ledgerId: number): Promise<LedgerInfo | undefined> {
    validateLedgerId(ledgerId);
    const fields = await this.call(ledgerId, () => this.client.hgetall(this.keys.meta(ledgerId)));
    return parseLedgerMeta(ledgerId, fields);
  }

  async delete(ledgerId: number): Promise<void> {
    validateLedgerId(ledgerId);
    // The ledger goes first and its index entry last, so no ledger is ever left unlisted.
    await this.call(ledgerId, () => this.client.unlink(this.keys.meta(ledgerId), this.keys.entries(ledgerId)));
    await this.call(ledgerId, () => this.client.zrem(this.keys.index, String(ledgerId)));
  }

  async infoMany(ledgerIds: readonly number[]): Promise<PromiseSettledResult<LedgerInfo | undefined>[]> {
    const ids = validateLedgerBatch(ledgerIds);
    if (ids.length === 0) return [];
    const replies = await this.call(-1, () =>
      eachLedger(
        this.client,
        ids,
        (pipeline, id) => void pipeline.hgetall(this.keys.meta(id)),
        (id) => this.client.hgetall(this.keys.meta(id)),
      ),
    );
    return replies.map(([error, fields], i) =>
      settle(() => {
        if (error) throw this.failure(error, ids[i]!);
        return parseLedgerMeta(ids[i]!, fields as Record<string, string>);
      }),
    );
  }

  async deleteMany(ledgerIds: readonly number[]): Promise<PromiseSettledResult<void>[]> {
    const ids = validateLedgerBatch(ledgerIds);
    if (ids.length === 0) return [];
    // As in delete: every ledger first, then the index entries of those that went, so none is left unlisted.
    const replies = await this.call(-1, () =>
      eachLedger(
        this.client,
        ids,
        (pipeline, id) => void pipeline.unlink(this.keys.meta(id), this.keys.entries(id)),
        (id) => this.client.unlink(this.keys.meta(id), this.keys.entries(id)),
      ),
    );
    const results = replies.map(([error], i): PromiseSettledResult<void> =>
      error ? { status: 'rejected', reason: this.failure(error, ids[i]!) } : { status: 'fulfilled', value: undefined },
    );
    const gone = ids.filter((_, i) => results[i]!.status === 'fulfilled');
    if (gone.length === 0) return results;
    try {
      await this.call(-1, () => this.client.zrem(this.keys.index, ...gone.map(String)));
    } catch (error) {
      // Gone but still listed, as after an interrupted delete: failed, so that the caller deletes them again.
      return results.map((result) => (result.status === 'fulfilled' ? { status: 'rejected', reason: error } : result));
    }
    return results;
  }

  async list(options?: { after?: number; limit?: number }): Promise<{ ledgerIds: number[]; next?: number }> {
    const { after, limit } = validateListOptions(options);
    const members = await this.call(-1, () =>
      this.client.zrangebyscore(this.keys.index, `(${after}`, '+inf', 'LIMIT', 0, limit + 1),
    );
    const ledgerIds = members.slice(0, limit).map(toInteger);
    return members.length > limit ? { ledgerIds, next: ledgerIds[ledgerIds.length - 1]! } : { ledgerIds };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.turn.release();
    await disconnectRedis(this.client);
  }

  /**
   * The append script and WAIT in one pipeline, so WAIT covers exactly this append. A pipeline writes its
   * commands into a buffer of its own, so here the entries are copied into one argument, or each into its own.
   */
  private async appendAndWait(
    ledgerId: number,
    entries: Uint8Array[],
    callNumber: number,
    packed: boolean,
    totalBytes: number,
    allowanceMs: number,
  ): Promise<number> {
    const count = entries.length;
    const keys = [this.keys.meta(ledgerId), this.keys.entries(ledgerId), String(callNumber)];
    const script: LedgerScriptName = packed ? 'ledgerAppendPacked' : 'ledgerAppend';
    const args = packed
      ? [...keys, entrySizes(entries), Buffer.concat(entries, totalBytes)]
      : [...keys, ...entries.map(asBuffer)];
    const replies = await this.call(
      ledgerId,
      () =>
        this.turn.send(() => {
          const pipeline = this.client.pipeline();
          (pipeline as unknown as Record<LedgerScriptName, (...a: (string | Buffer)[]) => unknown>)[script](...args);
          return pipeline.wait(this.waitReplicas, this.waitTimeoutMs).exec();
        }),
      allowanceMs,
    );
    const [appendError, firstReply] = replies?.[0] ?? [new Error('the append reply is missing')];
    if (appendError) throw this.failure(appendError, ledgerId);
    const firstEntryId = toInteger(firstReply);
    const [waitError, acknowledged] = replies?.[1] ?? [new Error('the WAIT reply is missing')];
    if (waitError || toInteger(acknowledged) < this.waitReplicas) {
      throw new LedgerlineError(
        'UNAVAILABLE',
        LedgerStoreReason.REPLICATION_INCOMPLETE,
        `entries ${firstEntryId}..${firstEntryId + count - 1} of ledger ${ledgerId} reached ` +
          `${waitError ? 'an unknown number of' : String(acknowledged)} of ${this.waitReplicas} replicas ` +
          `within ${this.waitTimeoutMs} ms: they are stored but not acknowledged`,
        { details: { ledgerId: String(ledgerId), firstEntryId: String(firstEntryId), count: String(count) } },
      );
    }
    return firstEntryId;
  }

  private script(name: LedgerScriptName): ScriptCall {
    const client = this.client as unknown as Record<LedgerScriptName, ScriptCall>;
    return client[name].bind(this.client);
  }

  /** Runs one Redis call with a deadline, refusing after close and mapping failures. */
  private async call<T>(ledgerId: number, run: () => Promise<T>, payloadAllowance = 0): Promise<T> {
    if (this.closed) throw storeClosed('redis');
    // A large append may take longer than a small call by its size (see storage-kit's payload deadline).
    const deadlineMs = this.operationTimeoutMs + payloadAllowance;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(storeUnavailable('redis', `no reply within ${deadlineMs} ms`)), deadlineMs);
    });
    try {
      return await Promise.race([run(), deadline]);
    } catch (thrown) {
      throw this.failure(thrown, ledgerId);
    } finally {
      clearTimeout(timer);
    }
  }

  private failure(thrown: unknown, ledgerId: number): LedgerlineError {
    if (isOvertakenAppend(thrown)) {
      // Refused, so not stored; UNAVAILABLE because it comes of a dropped connection, and the writer rolls over.
      return storeUnavailable('redis', `an append to ledger ${ledgerId} arrived after a later append of its writer`);
    }
    switch (scriptReason(thrown)) {
      case LedgerStoreReason.LEDGER_EXISTS:
        return ledgerExists(ledgerId);
      case LedgerStoreReason.LEDGER_NOT_FOUND:
        return ledgerNotFound(ledgerId);
      case LedgerStoreReason.LEDGER_FENCED:
        return ledgerFenced(ledgerId);
      case LedgerStoreReason.LEDGER_CLOSED:
        return ledgerClosed(ledgerId);
      case LedgerStoreReason.LEDGER_STORE_CORRUPT:
        return storeCorrupt(`ledger ${ledgerId}: ${(thrown as Error).message}`, { ledgerId: String(ledgerId) });
      default:
        return fromRedisError(thrown);
    }
  }
}

/** The entries' sizes in bytes, comma-separated: how the packed append script cuts its one argument. */
function entrySizes(entries: readonly Uint8Array[]): string {
  let sizes = String(entries[0]!.byteLength);
  for (let index = 1; index < entries.length; index++) sizes += `,${entries[index]!.byteLength}`;
  return sizes;
}
