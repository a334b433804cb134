import type { TopicName } from '@ledgerline/naming';
import { LedgerlineError } from '@ledgerline/errors';
import type { AdminContext } from '../admin-context.js';
import { resolveOwnableTopic } from './leases.js';
import { MAX_SHARED_AUTO_CREATIONS } from '../limits.js';
import type { PoliciesRecord } from '../records/records.js';
import type { TopicScope } from '../admin/topic-scope.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

/** Creates a non-partitioned topic through CreateTopic's own path (TopicAdmin.createTopic). */
export type CreateTopic = (topic: string) => Promise<unknown>;

/**
 * Whether a lookup of `topic`, absent, may create it: only where the
 * namespace's allowAutoTopicCreation policy says so, never in a reader
 * namespace (PIP-63: it holds no topics of its own), and never for a
 * `-partition-N` name, which only a partitioned topic's creation makes.
 */
export function mayAutoCreate(policies: PoliciesRecord, topic: TopicName): boolean {
  return (
    policies.allowAutoTopicCreation && !policies.readonly && policies.writerNamespace === '' && !topic.isPartitioned
  );
}

/**
 * The TOPIC_NOT_FOUND a lookup answers with. Where only the namespace's policy
 * stood in the way, it says both ways out, since that refusal is what a user
 * of a fresh namespace meets first; a reader namespace or a partition's name
 * keeps the plain refusal, as no policy would change it.
 */
function notCreatedOnLookup(notFound: LedgerlineError, policies: PoliciesRecord, topic: TopicName): LedgerlineError {
  if (!mayAutoCreate({ ...policies, allowAutoTopicCreation: true }, topic)) return notFound;
  const name = topic.toString();
  const namespace = topic.namespaceName.toString();
  return new LedgerlineError(
    'NOT_FOUND',
    MetadataServiceReason.TOPIC_NOT_FOUND,
    `topic ${name} does not exist, and namespace ${namespace} does not allow topic auto-creation:` +
      ` create it (ledgerline topics create ${name}) or allow auto-creation` +
      ` (ledgerline namespaces update ${namespace} --allow-auto-topic-creation true)`,
    { details: { ...notFound.details, namespace } },
  );
}

/**
 * Topic creation on lookup (Pulsar's allowAutoTopicCreation, type
 * non-partitioned). The topic is made through CreateTopic's path, so maxTopics
 * and the plain/partitioned kind checks hold exactly as they do there.
 *
 * Lookups racing to create the same topic in this process share one creation;
 * across instances each creates and the losers' ALREADY_EXISTS is success.
 * A racer refused TOO_MANY_TOPICS may have lost the namespace's last slot to
 * the creation of this very topic: it looks again and answers if the topic is
 * there (the winner's write can still be in flight on another instance, and
 * then the refusal stands and the client's next lookup finds the topic).
 */
export class TopicAutoCreation {
  readonly #context: AdminContext;
  readonly #create: CreateTopic;
  /** Creations under way, by topic name; beyond MAX_SHARED_AUTO_CREATIONS a lookup creates on its own. */
  readonly #inFlight = new Map<string, Promise<void>>();

  constructor(context: AdminContext, create: CreateTopic) {
    this.#context = context;
    this.#create = create;
  }

  /** Resolves an ownable topic, creating it first when it is absent and `policies` allow it. */
  async resolve(topic: TopicName, policies: PoliciesRecord): Promise<TopicScope> {
    try {
      return await resolveOwnableTopic(this.#context, topic);
    } catch (error) {
      if (!LedgerlineError.is(error, MetadataServiceReason.TOPIC_NOT_FOUND)) throw error;
      if (!mayAutoCreate(policies, topic)) throw notCreatedOnLookup(error, policies, topic);
    }
    try {
      await this.#shared(topic);
    } catch (error) {
      if (!LedgerlineError.is(error, MetadataServiceReason.TOO_MANY_TOPICS)) throw error;
      return resolveOwnableTopic(this.#context, topic).catch((again: unknown) => {
        throw LedgerlineError.is(again, MetadataServiceReason.TOPIC_NOT_FOUND) ? error : again;
      });
    }
    return resolveOwnableTopic(this.#context, topic);
  }

  #shared(topic: TopicName): Promise<void> {
    const name = topic.toString();
    const running = this.#inFlight.get(name);
    if (running !== undefined) return running;
    const creation = this.#createOnce(name);
    if (this.#inFlight.size >= MAX_SHARED_AUTO_CREATIONS) return creation;
    this.#inFlight.set(name, creation);
    const forget = () => {
      if (this.#inFlight.get(name) === creation) this.#inFlight.delete(name);
    };
    creation.then(forget, forget);
    return creation;
  }

  async #createOnce(name: string): Promise<void> {
    try {
      await this.#create(name);
    } catch (error) {
      if (!(error instanceof LedgerlineError && error.code === 'ALREADY_EXISTS')) throw error;
    }
  }
}
