import type { ApiSpec } from './apis/api-spec.js';
import {
  ALTER_CONFIGS,
  CREATE_PARTITIONS,
  CREATE_TOPICS,
  DELETE_TOPICS,
  DESCRIBE_CLUSTER,
  DESCRIBE_CONFIGS,
  INCREMENTAL_ALTER_CONFIGS,
  METADATA,
} from './apis/topic-apis.js';
import { DELETE_RECORDS, FETCH, LIST_OFFSETS, PRODUCE } from './apis/data-apis.js';
import {
  DELETE_GROUPS,
  DESCRIBE_GROUPS,
  FIND_COORDINATOR,
  HEARTBEAT,
  JOIN_GROUP,
  LEAVE_GROUP,
  LIST_GROUPS,
  OFFSET_COMMIT,
  OFFSET_DELETE,
  OFFSET_FETCH,
  SYNC_GROUP,
} from './apis/group-apis.js';
import { DESCRIBE_PRODUCERS } from './apis/producer-apis.js';
import { API_VERSIONS, INIT_PRODUCER_ID, SASL_AUTHENTICATE, SASL_HANDSHAKE } from './apis/handshake-apis.js';

/** Every API the codec has a schema for, by key. ApiVersions answers with exactly this table. */
export const API_SPECS: readonly ApiSpec[] = [
  PRODUCE,
  FETCH,
  LIST_OFFSETS,
  METADATA,
  OFFSET_COMMIT,
  OFFSET_FETCH,
  FIND_COORDINATOR,
  JOIN_GROUP,
  HEARTBEAT,
  LEAVE_GROUP,
  SYNC_GROUP,
  DESCRIBE_GROUPS,
  LIST_GROUPS,
  SASL_HANDSHAKE,
  API_VERSIONS,
  CREATE_TOPICS,
  DELETE_TOPICS,
  DELETE_RECORDS,
  INIT_PRODUCER_ID,
  DESCRIBE_CONFIGS,
  ALTER_CONFIGS,
  SASL_AUTHENTICATE,
  CREATE_PARTITIONS,
  DELETE_GROUPS,
  INCREMENTAL_ALTER_CONFIGS,
  OFFSET_DELETE,
  DESCRIBE_CLUSTER,
  DESCRIBE_PRODUCERS,
];

const byKey = new Map<number, ApiSpec>(API_SPECS.map((spec) => [spec.key, spec]));

/** The API keys by name, for callers that dispatch on them. */
export const ApiKey = {
  Produce: PRODUCE.key,
  Fetch: FETCH.key,
  ListOffsets: LIST_OFFSETS.key,
  Metadata: METADATA.key,
  OffsetCommit: OFFSET_COMMIT.key,
  OffsetFetch: OFFSET_FETCH.key,
  FindCoordinator: FIND_COORDINATOR.key,
  JoinGroup: JOIN_GROUP.key,
  Heartbeat: HEARTBEAT.key,
  LeaveGroup: LEAVE_GROUP.key,
  SyncGroup: SYNC_GROUP.key,
  DescribeGroups: DESCRIBE_GROUPS.key,
  ListGroups: LIST_GROUPS.key,
  SaslHandshake: SASL_HANDSHAKE.key,
  ApiVersions: API_VERSIONS.key,
  CreateTopics: CREATE_TOPICS.key,
  DeleteTopics: DELETE_TOPICS.key,
  DeleteRecords: DELETE_RECORDS.key,
  InitProducerId: INIT_PRODUCER_ID.key,
  DescribeConfigs: DESCRIBE_CONFIGS.key,
  AlterConfigs: ALTER_CONFIGS.key,
  SaslAuthenticate: SASL_AUTHENTICATE.key,
  CreatePartitions: CREATE_PARTITIONS.key,
  DeleteGroups: DELETE_GROUPS.key,
  IncrementalAlterConfigs: INCREMENTAL_ALTER_CONFIGS.key,
  OffsetDelete: OFFSET_DELETE.key,
  DescribeCluster: DESCRIBE_CLUSTER.key,
  DescribeProducers: DESCRIBE_PRODUCERS.key,
} as const;

export function apiSpec(key: number): ApiSpec | undefined {
  return byKey.get(key);
}

/** The ApiVersions answer's list: each API and the versions served. */
export function supportedApiVersions(): { apiKey: number; minVersion: number; maxVersion: number }[] {
  return API_SPECS.map((spec) => ({ apiKey: spec.key, minVersion: spec.minVersion, maxVersion: spec.maxVersion })).sort(
    (a, b) => a.apiKey - b.apiKey,
  );
}
