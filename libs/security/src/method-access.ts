import { NamespaceName, TopicName, validateTenant } from '@ledgerline/naming';

/** What a role may be granted on a namespace (Pulsar's AuthAction). */
export type AuthActionName = 'produce' | 'consume';

/**
 * What a call needs, worked out from its method and request alone (never from
 * whether the topic exists, so a refusal tells nothing about it):
 * - `none`: nothing beyond authentication (a later message of a stream whose
 *   opening was checked);
 * - `super-user`: a super-user role;
 * - `tenant-admin`: an admin role of the tenant (or a super-user);
 * - `namespace`: one of `actions` granted on the namespace (or a tenant admin, or a super-user).
 */
export type Access =
  | { kind: 'none' }
  | { kind: 'super-user' }
  | { kind: 'tenant-admin'; tenant: string; namespace?: string }
  | { kind: 'namespace'; namespace: string; actions: readonly AuthActionName[] };

type Rule = (request: Record<string, unknown>) => Access | readonly Access[];

const SUPER_USER: Access = { kind: 'super-user' };

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function ofTopic(topic: unknown, actions: readonly AuthActionName[]): Access {
  return { kind: 'namespace', namespace: TopicName.parse(text(topic)).namespaceName.toString(), actions };
}

function adminOfTopic(topic: unknown): Access {
  const name = TopicName.parse(text(topic));
  return { kind: 'tenant-admin', tenant: name.tenant, namespace: name.namespaceName.toString() };
}

/**
 * A tenant's admin: the name is checked first, so a bad one is the naming
 * package's INVALID_ARGUMENT rather than a refusal that hides the mistake.
 */
function adminOfTenant(tenant: unknown): Access {
  return { kind: 'tenant-admin', tenant: validateTenant(text(tenant)) };
}

function adminOfNamespace(namespace: unknown): Access {
  const name = NamespaceName.parse(text(namespace));
  return { kind: 'tenant-admin', tenant: name.tenant, namespace: name.toString() };
}

const PRODUCE = ['produce'] as const;
const CONSUME = ['consume'] as const;
const LOOKUP = ['produce', 'consume'] as const;

const topicField =
  (actions: readonly AuthActionName[]): Rule =>
  (request) =>
    ofTopic(request['topic'], actions);
const messageTopic: Rule = (request) =>
  ofTopic((request['message'] as { topic?: unknown } | undefined)?.topic, PRODUCE);
/**
 * A Publish request may carry several entries (`message` then `more`), each
 * naming its topic: every namespace they name is checked, once each.
 */
const publishTopics: Rule = (request) => {
  const more = Array.isArray(request['more']) ? (request['more'] as Array<{ topic?: unknown }>) : [];
  const namespaces = new Map<string, Access>();
  for (const message of [request['message'] as { topic?: unknown } | undefined, ...more]) {
    const access = ofTopic(message?.topic, PRODUCE);
    if (access.kind === 'namespace') namespaces.set(access.namespace, access);
  }
  return [...namespaces.values()];
};
const namespaceAdmin: Rule = (request) => adminOfNamespace(request['namespace']);
/** A Kafka group's index of commits in a namespace: what its commits' cursor moves and deletions need there. */
const namespaceConsume: Rule = (request) => ({
  kind: 'namespace',
  namespace: NamespaceName.parse(text(request['namespace'])).toString(),
  actions: CONSUME,
});
const topicAdmin: Rule = (request) => adminOfTopic(request['topic']);

/** A Consume stream is checked when it subscribes; flow, acks and nacks act on that subscription only. */
const consumeCommand: Rule = (request) => {
  const command = request['command'] as { case?: string; value?: { topic?: unknown } } | undefined;
  return command?.case === 'subscribe' ? ofTopic(command.value?.topic, CONSUME) : { kind: 'none' };
};

/**
 * Every client-facing method and what it needs (Pulsar's rules: publish needs
 * produce; subscribe, consume, seek and reads need consume; a lookup or the
 * topic's metadata needs either; admin calls need the tenant's admin or a
 * super-user). Internal APIs are not here: service certificates guard them.
 * A method missing from this table is for super-users only.
 */
const RULES: Readonly<Record<string, Rule>> = {
  '/ledgerline.v1.TopicsService/Publish': publishTopics,
  '/ledgerline.v1.TopicsService/PublishOne': messageTopic,
  '/ledgerline.v1.TopicsService/Consume': consumeCommand,
  '/ledgerline.v1.TopicsService/Seek': topicField(CONSUME),
  '/ledgerline.v1.TopicsService/FindPosition': topicField(CONSUME),
  '/ledgerline.v1.TopicsService/FetchByOffset': topicField(CONSUME),
  '/ledgerline.v1.TopicsService/Unsubscribe': topicField(CONSUME),
  '/ledgerline.v1.TopicsService/GetTopicStats': topicField(LOOKUP),
  '/ledgerline.v1.TopicsService/UnloadTopic': topicAdmin,
  // Kafka's DeleteRecords needs DELETE on the topic: here the topic's tenant admin, as deleting the topic does.
  '/ledgerline.v1.TopicsService/DeleteRecords': topicAdmin,
  // Kafka's DescribeProducers needs READ on the topic: here consume, as a fetch does.
  '/ledgerline.v1.TopicsService/ListProducers': topicField(CONSUME),
  '/ledgerline.v1.LookupService/LookupTopic': topicField(LOOKUP),
  '/ledgerline.v1.AdminService/CreateTenant': () => SUPER_USER,
  '/ledgerline.v1.AdminService/ListTenants': () => SUPER_USER,
  '/ledgerline.v1.AdminService/GetTenant': (request) => adminOfTenant(request['tenant']),
  '/ledgerline.v1.AdminService/DeleteTenant': () => SUPER_USER,
  '/ledgerline.v1.AdminService/CreateNamespace': namespaceAdmin,
  '/ledgerline.v1.AdminService/GetNamespace': namespaceAdmin,
  '/ledgerline.v1.AdminService/UpdateNamespace': namespaceAdmin,
  '/ledgerline.v1.AdminService/SetWriterNamespace': (request) => [
    adminOfNamespace(request['namespace']),
    ...(text(request['writerNamespace']) === '' ? [] : [adminOfNamespace(request['writerNamespace'])]),
  ],
  '/ledgerline.v1.AdminService/ListNamespaces': (request) => ({
    kind: 'tenant-admin',
    tenant: text(request['tenant']),
  }),
  '/ledgerline.v1.AdminService/DeleteNamespace': namespaceAdmin,
  '/ledgerline.v1.AdminService/CreateTopic': topicAdmin,
  '/ledgerline.v1.AdminService/CreateTopics': (request) =>
    (Array.isArray(request['topics']) ? (request['topics'] as unknown[]) : []).map(adminOfTopic),
  '/ledgerline.v1.AdminService/GetTopic': topicField(LOOKUP),
  // What GetTopic needs, on the namespace searched: the id names no topic until it is found.
  '/ledgerline.v1.AdminService/GetTopicById': (request) => ({
    kind: 'namespace',
    namespace: NamespaceName.parse(text(request['namespace'])).toString(),
    actions: LOOKUP,
  }),
  '/ledgerline.v1.AdminService/UpdatePartitionedTopic': topicAdmin,
  '/ledgerline.v1.AdminService/DeleteTopic': topicAdmin,
  '/ledgerline.v1.AdminService/ListTopics': namespaceAdmin,
  '/ledgerline.v1.AdminService/CountTopics': namespaceAdmin,
  '/ledgerline.v1.AdminService/GrantPermission': namespaceAdmin,
  '/ledgerline.v1.AdminService/RevokePermission': namespaceAdmin,
  '/ledgerline.v1.AdminService/GetPermissions': namespaceAdmin,
  // The Kafka gateway indexes a group's commits as it moves their cursors, with the client's rights.
  '/ledgerline.v1.AdminService/AddKafkaGroupPartition': topicField(CONSUME),
  '/ledgerline.v1.AdminService/GetKafkaGroupIndex': namespaceConsume,
  '/ledgerline.v1.AdminService/UpdateKafkaGroupIndex': namespaceConsume,
  '/ledgerline.v1.AdminService/DeleteKafkaGroupIndex': namespaceConsume,
};

/**
 * What a call to `method` with `request` needs; a bad topic or namespace name
 * fails here with the naming package's INVALID_ARGUMENT, as the handler would.
 */
export function requiredAccess(method: string, request: unknown): readonly Access[] {
  const rule = RULES[method];
  if (rule === undefined) return [SUPER_USER];
  const access = rule((request ?? {}) as Record<string, unknown>);
  return Array.isArray(access) ? access : [access as Access];
}
