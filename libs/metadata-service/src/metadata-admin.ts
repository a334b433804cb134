import { topicNameOfId } from './admin/topic-ids.js';
import type { Bus } from '@ledgerline/bus';
import type { MetadataStore } from '@ledgerline/metadata-store';
import type { AdminContext } from './admin-context.js';
import { LEDGER_ID_SEQUENCE } from '@ledgerline/naming';
import { finishTopicDeletion } from './admin/topic-deletion-finish.js';
import { lookupTopic } from './coordination/lookup.js';
import { acquireLease, getLiveLease, releaseLease, renewLease } from './coordination/leases.js';
import { confirmLeases } from './coordination/lease-confirmation.js';
import { reclaimLease, setOwnerDraining, transferLease } from './coordination/lease-transfer.js';
import { readBalancerStatus } from './coordination/balancer.js';
import { createNamespace, setWriterNamespace, updateNamespace } from './admin/namespace-admin.js';
import { deleteNamespace } from './admin/namespace-deletion.js';
import { getNamespace, listNamespaces, parseNamespace } from './admin/namespaces.js';
import {
  keepAlive,
  listLiveOwners,
  registerOwner,
  unregisterOwner,
  type OwnerRegistration,
} from './coordination/owner-sessions.js';
import type { PolicyInput } from './admin/policies.js';
import { getAuthPolicies, grantPermission, revokePermission } from './admin/permissions.js';
import type { OwnerRoleName } from './records/records.js';
import type { OwnerLoadRecord } from './records/owner-load.js';
import { SessionLiveness, type SessionLivenessSettings } from './coordination/session-liveness.js';
import { createTenant, deleteTenant, getTenant, listTenants } from './admin/tenants.js';
import { createTopicsBatch } from './admin/topic-batch.js';
import { ListingCache } from './listing/listing-cache.js';
import { listTopicPage, type TopicPage } from './listing/topic-listing.js';
import { reconcileTopicCount } from './admin/topic-recount.js';
import { TopicReservations } from './admin/topic-reservations.js';
import { resolveNamespaceStorage, resolveTopic } from './admin/topic-scope.js';
import { TopicAdmin, type CountDriftListener } from './admin/topics.js';
import { TopicAutoCreation } from './coordination/topic-auto-creation.js';
import {
  addKafkaGroupPartition,
  deleteKafkaGroupIndex,
  getKafkaGroupIndex,
  updateKafkaGroupIndex,
} from './admin/kafka-group-index.js';
import { DEFAULT_RECOUNT_SETTLE_MS } from './limits.js';
import { OwnerControls } from './coordination/owner-controls.js';
import { UnreachableOwners, type UnreachableOwnerSettings } from './coordination/unreachable-owners.js';

export interface MetadataAdminOptions {
  /** Where topic deletions announce the ledgers they marked (the store announces its own changes). */
  bus?: Bus;
  /** The clock; tests pass their own. */
  now?: () => number;
  /** How owners known to be gone are told apart from slow ones (defaults in session-liveness.ts). */
  sessionLiveness?: Partial<SessionLivenessSettings>;
  /** Told about namespaces whose topic counter may have drifted high. */
  onCountDrift?: CountDriftListener;
  /** How long a topic counter must be still before a recount may rewrite it. */
  recountSettleMs?: number;
  /** How a client's report of an owner it cannot reach is acted on (unreachable-owners.ts). */
  unreachableOwners?: Partial<UnreachableOwnerSettings>;
}

/**
 * Every admin, ownership and lookup operation of the metadata service as
 * plain TypeScript over a MetadataStore: the gRPC services are thin wrappers
 * of this, and tests and benchmarks can use it without a network.
 */
export class MetadataAdmin {
  readonly context: AdminContext;
  readonly topicAdmin: TopicAdmin;
  /** Ends the sessions of owners whose process is known gone (WatchOwnerSession). */
  readonly sessionLiveness: SessionLiveness;
  /** The clients of the owners' OwnerControlService, for the balancer and for unreachableOwners. */
  readonly ownerControls = new OwnerControls();
  /** Moves topics off owners their clients report they cannot reach (LookupTopic's unreachable_address). */
  readonly unreachableOwners: UnreachableOwners;
  readonly #autoCreation: TopicAutoCreation;
  readonly #onCountDrift: CountDriftListener;
  readonly #settleMs: number;

  constructor(store: MetadataStore, options: MetadataAdminOptions = {}) {
    this.context = { store, now: options.now ?? Date.now, ...(options.bus === undefined ? {} : { bus: options.bus }) };
    this.#onCountDrift = (namespace) => options.onCountDrift?.(namespace);
    this.#settleMs = options.recountSettleMs ?? DEFAULT_RECOUNT_SETTLE_MS;
    this.topicAdmin = new TopicAdmin(this.context, new TopicReservations(this.context), this.#onCountDrift);
    this.sessionLiveness = new SessionLiveness(this.context, options.sessionLiveness);
    this.unreachableOwners = new UnreachableOwners(this.context, this.ownerControls, options.unreachableOwners);
    this.#autoCreation = new TopicAutoCreation(this.context, (topic) => this.topicAdmin.createTopic(topic));
  }

  createTenant = (tenant: string, adminRoles: readonly string[] = []) => createTenant(this.context, tenant, adminRoles);
  getTenant = (tenant: string) => getTenant(this.context, tenant);
  listTenants = () => listTenants(this.context);
  deleteTenant = (tenant: string) => deleteTenant(this.context, tenant);

  createNamespace = (namespace: string, policies?: PolicyInput) => createNamespace(this.context, namespace, policies);
  getNamespace = (namespace: string) => getNamespace(this.context, namespace);
  updateNamespace = (namespace: string, policies: PolicyInput) => updateNamespace(this.context, namespace, policies);
  setWriterNamespace = (reader: string, writer: string) => setWriterNamespace(this.context, reader, writer);
  listNamespaces = (tenant: string) => listNamespaces(this.context, tenant);
  grantPermission = (namespace: string, role: string, actions: readonly string[]) =>
    grantPermission(this.context, namespace, role, actions);
  revokePermission = (namespace: string, role: string) => revokePermission(this.context, namespace, role);
  getAuthPolicies = (namespace: string) => getAuthPolicies(this.context, namespace);
  deleteNamespace = (namespace: string) => deleteNamespace(this.context, namespace, this.#settleMs);

  createTopic = (topic: string, partitions = 0) => this.topicAdmin.createTopic(topic, partitions);
  createTopics = (topics: readonly string[]) =>
    createTopicsBatch(this.context, this.topicAdmin.reservations, this.#onCountDrift, topics);
  getTopic = (topic: string) => this.topicAdmin.getTopic(topic);
  /** The topic of a namespace with an id, as getTopic answers it (admin/topic-ids.ts). */
  getTopicById = async (namespace: string, topicId: Uint8Array) =>
    this.topicAdmin.getTopic(await topicNameOfId(this.context, namespace, topicId));
  updatePartitionedTopic = (topic: string, partitions: number, validateOnly = false) =>
    this.topicAdmin.updatePartitionedTopic(topic, partitions, validateOnly);
  deleteTopic = (topic: string) => this.topicAdmin.deleteTopic(topic);
  countTopics = (namespace: string) => this.topicAdmin.countTopics(namespace);
  /** For the garbage collector: removes a deleted topic's node once its ledgers are gone (topic-deletion-finish.ts). */
  finishTopicDeletion = (managedLedgerPath: string, expectedVersion: number) =>
    finishTopicDeletion(this.context, managedLedgerPath, expectedVersion);

  /** The Kafka gateway's index of a group's committed partitions (admin/kafka-group-index.ts). */
  addKafkaGroupPartition = (topic: string, group: string, maxPartitions = 0) =>
    addKafkaGroupPartition(this.context, topic, group, maxPartitions);
  getKafkaGroupIndex = (namespace: string, group: string) => getKafkaGroupIndex(this.context, namespace, group);
  updateKafkaGroupIndex = (namespace: string, group: string, removeTopics: readonly string[], markComplete = false) =>
    updateKafkaGroupIndex(this.context, namespace, group, removeTopics, markComplete);
  deleteKafkaGroupIndex = (namespace: string, group: string, expectedVersion: number) =>
    deleteKafkaGroupIndex(this.context, namespace, group, expectedVersion);

  /** What listings in progress read ahead, so their next pages need fewer store reads. */
  readonly #listings = new ListingCache();

  async listTopics(namespaceName: string, pageToken = '', pageSize = 0, prefix = ''): Promise<TopicPage> {
    const namespace = parseNamespace(namespaceName);
    const storage = await resolveNamespaceStorage(this.context, namespace);
    return listTopicPage(
      this.context.store,
      {
        storageNamespace: storage.storageNamespace,
        buckets: storage.storageBuckets,
        displayNamespace: namespace,
        pageToken,
        pageSize,
        prefix,
      },
      this.#listings,
    );
  }

  /** Recounts a namespace's topics and repairs its counter if a crash left it high. */
  recountTopics = (namespace: string, settleMs = this.#settleMs) =>
    reconcileTopicCount(this.context, parseNamespace(namespace), settleMs);

  registerOwner = (owner: OwnerRegistration, ttlMs: number) => registerOwner(this.context, owner, ttlMs);
  keepAliveOwner = (sessionId: string, load?: OwnerLoadRecord) => keepAlive(this.context, sessionId, load);
  unregisterOwner = (sessionId: string) => unregisterOwner(this.context, sessionId);
  listOwners = (group: string, role?: OwnerRoleName) => listLiveOwners(this.context, group, role);

  acquireLease = (topic: string, sessionId: string) => acquireLease(this.context, topic, sessionId);
  renewLease = (topic: string, sessionId: string) => renewLease(this.context, topic, sessionId);
  confirmLeases = (sessionId: string, topics: readonly string[]) => confirmLeases(this.context, sessionId, topics);
  releaseLease = (topic: string, sessionId: string) => releaseLease(this.context, topic, sessionId);
  transferLease = (topic: string, sessionId: string, targetInstanceId: string) =>
    transferLease(this.context, topic, sessionId, targetInstanceId);
  reclaimLease = (topic: string, sessionId: string, version: number) =>
    reclaimLease(this.context, topic, sessionId, version);
  setOwnerDraining = (sessionId: string, draining: boolean) => setOwnerDraining(this.context, sessionId, draining);
  async getLease(topicName: string) {
    const scope = await resolveTopic(this.context, topicName);
    return getLiveLease(this.context, scope.topic);
  }

  /** Creates the topic first when it is absent and its namespace's allowAutoTopicCreation policy allows it. */
  lookupTopic = (topic: string, group = '') => lookupTopic(this.context, this.#autoCreation, topic, group);
  balancerStatus = () => readBalancerStatus(this.context);
  allocateLedgerId = () => this.context.store.nextId(LEDGER_ID_SEQUENCE);
}
