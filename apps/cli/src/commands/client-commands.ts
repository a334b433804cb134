import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import {
  messageIdToString,
  SUBSCRIPTION_TYPES,
  TRIMMED_OFFSET_POLICIES,
  type InitialPositionOption,
  type Message,
  type ReaderStart,
  type SubscriptionTypeName,
  type TrimmedOffsetPolicy,
} from '@ledgerline/client';
import { unexpectedRejection } from '@ledgerline/errors';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { CliReason, usageError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { withClient } from '../client-connection.js';
import { integerIn, urlOf } from '../admin-command.js';
import { connectAdmin } from '../admin-connection.js';
import { OwnerRole } from '@ledgerline/proto';
import { descriptionOf } from '../command-index.js';

/** The most messages one `produce`, `consume` or `read` handles. */
const MAX_COUNT = 1_000_000_000;
/** The largest file `produce -f` sends as one message. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

/** `--from` of consume: where a new subscription starts. */
type From = { initial: InitialPositionOption } | { timestamp: number };

function parseTime(value: string): number {
  const ms = Date.parse(value);
  if (!Number.isFinite(ms) || ms < 0)
    throw new InvalidArgumentError('expected an ISO 8601 time such as 2026-12-01T09:00:00Z.');
  return ms;
}

function parseFrom(value: string): From {
  if (value === 'earliest' || value === 'latest') return { initial: value };
  if (value.startsWith('offset:'))
    return { initial: { offset: integerIn(0, Number.MAX_SAFE_INTEGER)(value.slice(7)) } };
  if (value.startsWith('time:')) return { timestamp: parseTime(value.slice(5)) };
  throw new InvalidArgumentError('expected earliest, latest, offset:N or time:ISO.');
}

function collectProperty(value: string, previous: Record<string, string>): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('expected key=value.');
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

/** A message as one output line: its text, or with --json its fields. */
export function messageLine(message: Message, json: boolean): string {
  const text = Buffer.from(message.payload).toString('utf8');
  if (!json) return text;
  return JSON.stringify({
    payload: text,
    key: message.key ?? null,
    properties: message.properties,
    offset: Number(message.offset),
    messageId: messageIdToString(message.messageId),
    publishTime: new Date(message.publishTime).toISOString(),
    redeliveryCount: message.redeliveryCount,
    topic: message.topic,
  });
}

interface ProduceOptions {
  message?: string;
  file?: string;
  count: number;
  key?: string;
  property: Record<string, string>;
}

/** The payloads to send: -m, -f, or stdin lines (when stdin is not a terminal). */
async function* payloads(options: ProduceOptions, command: Command): AsyncGenerator<Uint8Array | string> {
  if (options.message !== undefined && options.file !== undefined) {
    command.error('error: give one of -m and -f', { code: 'ledgerline.usage' });
  }
  if (options.file !== undefined) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(options.file);
    } catch (error) {
      throw usageError(CliReason.FILE_UNREADABLE, `cannot read ${options.file}: ${(error as Error).message}`);
    }
    if (bytes.length > MAX_FILE_BYTES)
      throw usageError(CliReason.FILE_TOO_LARGE, `${options.file} is over ${MAX_FILE_BYTES} bytes`);
    for (let index = 0; index < options.count; index++) yield bytes;
    return;
  }
  if (options.message !== undefined) {
    for (let index = 0; index < options.count; index++) yield options.message;
    return;
  }
  if (process.stdin.isTTY === true) {
    command.error('error: give -m <text> or -f <file>, or pipe lines on stdin', { code: 'ledgerline.usage' });
  }
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) yield line;
}

function registerProduce(program: Command, io: CliIo): void {
  program
    .command('produce <topic>')
    .description(descriptionOf('produce'))
    .option('-m, --message <text>', 'the message text')
    .option('-f, --file <path>', 'send the file as one message')
    .option('-n, --count <n>', 'send the message n times (with -m or -f)', integerIn(1, MAX_COUNT), 1)
    .option('-k, --key <key>', 'the message key')
    .option('-p, --property <key=value>', 'a message property (repeatable)', collectProperty, {})
    .action(async (topic: string, options: ProduceOptions, command: Command) =>
      withClient(io, command, async (client) => {
        const producer = await client.producer({ topic });
        const progress = options.count > 1 ? io.progress(options.count, 'producing') : undefined;
        const sends: Promise<unknown>[] = [];
        let first: bigint | undefined;
        let last: bigint | undefined;
        for await (const payload of payloads(options, command)) {
          const sent = producer.send(payload, {
            ...(options.key === undefined ? {} : { key: options.key }),
            properties: options.property,
          });
          sends.push(
            sent.then((receipt) => {
              if (first === undefined || receipt.offset < first) first = receipt.offset;
              if (last === undefined || receipt.offset > last) last = receipt.offset;
              progress?.advance(1);
            }),
          );
        }
        try {
          await Promise.all(sends);
        } finally {
          progress?.stop();
        }
        await producer.close();
        const where =
          first === undefined ? '' : first === last ? ` at offset ${first}` : ` at offsets ${first}..${last}`;
        io.out(`produced ${sends.length} message(s) to ${topic}${where}`);
      }),
    );
}

interface ConsumeOptions {
  group: string;
  subscription: string;
  type: SubscriptionTypeName;
  count: number;
  from?: From;
  json: boolean;
}

function registerConsume(program: Command, io: CliIo): void {
  program
    .command('consume <topic>')
    .description(descriptionOf('consume'))
    .requiredOption('-s, --subscription <name>', 'the subscription')
    .option(
      '--group <group>',
      'the owner group to look the topic up through: a reader group (PIP-63) serves it from read-only owners',
      '',
    )
    .addOption(
      new Option('-t, --type <type>', 'the subscription type').choices(SUBSCRIPTION_TYPES).default('Exclusive'),
    )
    .option('-n, --count <n>', 'stop after n messages (0: until interrupted)', integerIn(0, MAX_COUNT), 1)
    .option(
      '--from <where>',
      'where a new subscription starts: earliest, latest, offset:N, or time:ISO (seeks)',
      parseFrom,
    )
    .option('--json', 'print JSON lines: payload, key, properties, offset, messageId, publishTime', false)
    .action(async (topic: string, options: ConsumeOptions, command: Command) =>
      withClient(
        io,
        command,
        async (client, signal) => {
          await showRoute(io, command, topic, options.group);
          const from = options.from;
          const consumer = await client.subscribe({
            topic,
            subscription: options.subscription,
            type: options.type,
            ...(from !== undefined && 'initial' in from ? { initialPosition: from.initial } : {}),
          });
          if (from !== undefined && 'timestamp' in from) await consumer.seek({ timestamp: from.timestamp });
          signal.addEventListener('abort', () => consumer.close().catch(unexpectedRejection), { once: true });
          let received = 0;
          for await (const message of consumer) {
            io.out(messageLine(message, options.json));
            await consumer.ack(message);
            received++;
            if (options.count > 0 && received >= options.count) break;
          }
          await consumer.close();
          if (process.stderr.isTTY === true) io.err(`consumed ${received} message(s)`);
        },
        { group: options.group },
      ),
    );
}

interface ReadOptions {
  group: string;
  offset?: number;
  time?: number;
  onTrimmedOffset?: TrimmedOffsetPolicy;
  count: number;
  json: boolean;
}

function registerRead(program: Command, io: CliIo): void {
  program
    .command('read <topic>')
    .description(descriptionOf('read'))
    .option('--offset <n>', 'the first offset to read', integerIn(0, Number.MAX_SAFE_INTEGER))
    .option(
      '--group <group>',
      'the owner group to look the topic up through: a reader group (PIP-63) serves it from read-only owners',
      '',
    )
    .option('--time <iso>', 'read from the first message stored at or after this time', parseTime)
    .addOption(
      new Option(
        '--on-trimmed-offset <policy>',
        'when retention removed the offset to read: fail (OUT_OF_RANGE naming the earliest retained offset) or' +
          ' go on from the earliest; default fail with --offset, earliest with --time',
      ).choices(TRIMMED_OFFSET_POLICIES),
    )
    .option('-n, --count <n>', 'stop after n messages (0: until interrupted)', integerIn(0, MAX_COUNT), 1)
    .option('--json', 'print JSON lines: payload, key, properties, offset, messageId, publishTime', false)
    .action(async (topic: string, options: ReadOptions, command: Command) => {
      if ((options.offset === undefined) === (options.time === undefined)) {
        command.error('error: give exactly one of --offset and --time', { code: 'ledgerline.usage' });
      }
      await withClient(
        io,
        command,
        async (client, signal) => {
          await showRoute(io, command, topic, options.group);
          const start: ReaderStart =
            options.offset !== undefined ? { offset: options.offset } : { timestamp: options.time! };
          const onTrimmed = options.onTrimmedOffset;
          const reader = await client.reader({
            topic,
            start,
            ...(onTrimmed === undefined ? {} : { onTrimmedOffset: onTrimmed }),
          });
          signal.addEventListener('abort', () => reader.close().catch(unexpectedRejection), { once: true });
          let read = 0;
          for await (const message of reader) {
            io.out(messageLine(message, options.json));
            read++;
            if (options.count > 0 && read >= options.count) break;
          }
          await reader.close();
        },
        { group: options.group },
      );
    });
}

/**
 * With --group, says on stderr where the lookup through that group leads
 * (PIP-63: a read-only owner and the reader topic), so the redirect is seen;
 * the messages still go to stdout under the topic name given.
 */
async function showRoute(io: CliIo, command: Command, topic: string, group: string): Promise<void> {
  if (group === '') return;
  const connection = connectAdmin(urlOf(command));
  try {
    const answer = await connection.lookup.lookupTopic({ topic, group });
    const role = answer.role === OwnerRole.READONLY ? 'read-only owner' : 'writer owner';
    const redirect = answer.redirectTopic === '' ? '' : ` (redirected to ${answer.redirectTopic})`;
    io.err(`through group ${group}: ${role} ${answer.advertisedAddress}${redirect}`);
  } finally {
    connection.close();
  }
}

/** `ledgerline produce`, `consume` and `read`. */
export function registerClientCommands(program: Command, io: CliIo): void {
  registerProduce(program, io);
  registerConsume(program, io);
  registerRead(program, io);
}
