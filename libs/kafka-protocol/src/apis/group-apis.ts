import { arrayOf, field } from '../schema.js';
import type { ApiSpec } from './api-spec.js';

const nullableString = { nullable: '0+', default: null } as const;

// FindCoordinator{Request,Response}.json: validVersions 0-4 (3+ flexible, 4 batches keys). Served 0-2.
export const FIND_COORDINATOR: ApiSpec = {
  key: 10,
  name: 'FindCoordinator',
  minVersion: 0,
  maxVersion: 2,
  flexibleFrom: 3,
  request: [field('key', 'string', '0+'), field('keyType', 'int8', '1+')],
  response: [
    field('throttleTimeMs', 'int32', '1+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '1+', nullableString),
    field('nodeId', 'int32', '0+'),
    field('host', 'string', '0+'),
    field('port', 'int32', '0+'),
  ],
};

// JoinGroup{Request,Response}.json: validVersions 0-9 (6+ flexible). Served 0-8. From v4 a member joining without
// an id is answered MEMBER_ID_REQUIRED with one and joins again with it; v7 answers the group's protocol type
// (KIP-559); v8 adds the reason a member gives for joining (KIP-800). v9 (KIP-814) tells a static leader that
// rejoins a Stable group that it leads but must not assign (SkipAssignment), where before v9 it is told the old
// member id leads: not served, so every client gets the pre-v9 answer.
export const JOIN_GROUP: ApiSpec = {
  key: 11,
  name: 'JoinGroup',
  minVersion: 0,
  maxVersion: 8,
  flexibleFrom: 6,
  request: [
    field('groupId', 'string', '0+'),
    field('sessionTimeoutMs', 'int32', '0+'),
    field('rebalanceTimeoutMs', 'int32', '1+', { default: -1 }),
    field('memberId', 'string', '0+'),
    field('groupInstanceId', 'string', '5+', { nullable: '5+', default: null }),
    field('protocolType', 'string', '0+'),
    arrayOf('protocols', [field('name', 'string', '0+'), field('metadata', 'bytes', '0+')], '0+'),
    field('reason', 'string', '8+', { nullable: '8+', default: null }),
  ],
  response: [
    field('throttleTimeMs', 'int32', '2+'),
    field('errorCode', 'int16', '0+'),
    field('generationId', 'int32', '0+', { default: -1 }),
    field('protocolType', 'string', '7+', { nullable: '7+', default: null }),
    field('protocolName', 'string', '0+', { nullable: '7+' }),
    field('leader', 'string', '0+'),
    field('memberId', 'string', '0+'),
    arrayOf(
      'members',
      [
        field('memberId', 'string', '0+'),
        field('groupInstanceId', 'string', '5+', { nullable: '5+', default: null }),
        field('metadata', 'bytes', '0+'),
      ],
      '0+',
    ),
  ],
};

// SyncGroup{Request,Response}.json: validVersions 0-5 (4+ flexible), all served. v5 carries the group's protocol
// type and name both ways (KIP-559): the coordinator answers INCONSISTENT_GROUP_PROTOCOL to a request naming others.
export const SYNC_GROUP: ApiSpec = {
  key: 14,
  name: 'SyncGroup',
  minVersion: 0,
  maxVersion: 5,
  flexibleFrom: 4,
  request: [
    field('groupId', 'string', '0+'),
    field('generationId', 'int32', '0+'),
    field('memberId', 'string', '0+'),
    field('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
    field('protocolType', 'string', '5+', { nullable: '5+', default: null }),
    field('protocolName', 'string', '5+', { nullable: '5+', default: null }),
    arrayOf('assignments', [field('memberId', 'string', '0+'), field('assignment', 'bytes', '0+')], '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '1+'),
    field('errorCode', 'int16', '0+'),
    field('protocolType', 'string', '5+', { nullable: '5+', default: null }),
    field('protocolName', 'string', '5+', { nullable: '5+', default: null }),
    field('assignment', 'bytes', '0+'),
  ],
};

// Heartbeat{Request,Response}.json: validVersions 0-4 (4+ flexible), all served.
export const HEARTBEAT: ApiSpec = {
  key: 12,
  name: 'Heartbeat',
  minVersion: 0,
  maxVersion: 4,
  flexibleFrom: 4,
  request: [
    field('groupId', 'string', '0+'),
    field('generationId', 'int32', '0+'),
    field('memberId', 'string', '0+'),
    field('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
  ],
  response: [field('throttleTimeMs', 'int32', '1+'), field('errorCode', 'int16', '0+')],
};

// LeaveGroup{Request,Response}.json: validVersions 0-5 (4+ flexible), all served. v5 adds each leaving member's
// reason (KIP-800), which is read and not kept.
export const LEAVE_GROUP: ApiSpec = {
  key: 13,
  name: 'LeaveGroup',
  minVersion: 0,
  maxVersion: 5,
  flexibleFrom: 4,
  request: [
    field('groupId', 'string', '0+'),
    field('memberId', 'string', '0-2'),
    arrayOf(
      'members',
      [
        field('memberId', 'string', '3+'),
        field('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
        field('reason', 'string', '5+', { nullable: '5+', default: null }),
      ],
      '3+',
    ),
  ],
  response: [
    field('throttleTimeMs', 'int32', '1+'),
    field('errorCode', 'int16', '0+'),
    arrayOf(
      'members',
      [
        field('memberId', 'string', '3+'),
        field('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
        field('errorCode', 'int16', '3+'),
      ],
      '3+',
    ),
  ],
};

// OffsetCommit{Request,Response}.json: validVersions 0-9 (8+ flexible). Served 0-7.
export const OFFSET_COMMIT: ApiSpec = {
  key: 8,
  name: 'OffsetCommit',
  minVersion: 0,
  maxVersion: 7,
  flexibleFrom: 8,
  request: [
    field('groupId', 'string', '0+'),
    field('generationId', 'int32', '1+', { default: -1 }),
    field('memberId', 'string', '1+'),
    field('groupInstanceId', 'string', '7+', { nullable: '7+', default: null }),
    field('retentionTimeMs', 'int64', '2-4', { default: -1n }),
    arrayOf(
      'topics',
      [
        field('name', 'string', '0+'),
        arrayOf(
          'partitions',
          [
            field('partitionIndex', 'int32', '0+'),
            field('committedOffset', 'int64', '0+'),
            field('committedLeaderEpoch', 'int32', '6+', { default: -1 }),
            field('commitTimestamp', 'int64', '1', { default: -1n }),
            field('committedMetadata', 'string', '0+', nullableString),
          ],
          '0+',
        ),
      ],
      '0+',
    ),
  ],
  response: [
    field('throttleTimeMs', 'int32', '3+'),
    arrayOf(
      'topics',
      [
        field('name', 'string', '0+'),
        arrayOf('partitions', [field('partitionIndex', 'int32', '0+'), field('errorCode', 'int16', '0+')], '0+'),
      ],
      '0+',
    ),
  ],
};

// OffsetFetch{Request,Response}.json: validVersions 0-8 (6+ flexible). Served 1-5 (v0 reads ZooKeeper offsets).
export const OFFSET_FETCH: ApiSpec = {
  key: 9,
  name: 'OffsetFetch',
  minVersion: 1,
  maxVersion: 5,
  flexibleFrom: 6,
  request: [
    field('groupId', 'string', '0+'),
    arrayOf('topics', [field('name', 'string', '0+'), arrayOf('partitionIndexes', 'int32', '0+')], '0+', {
      nullable: '2+',
    }),
  ],
  response: [
    field('throttleTimeMs', 'int32', '3+'),
    arrayOf(
      'topics',
      [
        field('name', 'string', '0+'),
        arrayOf(
          'partitions',
          [
            field('partitionIndex', 'int32', '0+'),
            field('committedOffset', 'int64', '0+'),
            field('committedLeaderEpoch', 'int32', '5+', { default: -1 }),
            field('metadata', 'string', '0+', nullableString),
            field('errorCode', 'int16', '0+'),
          ],
          '0+',
        ),
      ],
      '0+',
    ),
    field('errorCode', 'int16', '2+'),
  ],
};

// DescribeGroups{Request,Response}.json: validVersions 0-5 (5+ flexible). Served 0-4.
export const DESCRIBE_GROUPS: ApiSpec = {
  key: 15,
  name: 'DescribeGroups',
  minVersion: 0,
  maxVersion: 4,
  flexibleFrom: 5,
  request: [arrayOf('groups', 'string', '0+'), field('includeAuthorizedOperations', 'bool', '3+')],
  response: [
    field('throttleTimeMs', 'int32', '1+'),
    arrayOf(
      'groups',
      [
        field('errorCode', 'int16', '0+'),
        field('groupId', 'string', '0+'),
        field('groupState', 'string', '0+'),
        field('protocolType', 'string', '0+'),
        field('protocolData', 'string', '0+'),
        arrayOf(
          'members',
          [
            field('memberId', 'string', '0+'),
            field('groupInstanceId', 'string', '4+', { nullable: '4+', default: null }),
            field('clientId', 'string', '0+'),
            field('clientHost', 'string', '0+'),
            field('memberMetadata', 'bytes', '0+'),
            field('memberAssignment', 'bytes', '0+'),
          ],
          '0+',
        ),
        field('authorizedOperations', 'int32', '3+', { default: -2147483648 }),
      ],
      '0+',
    ),
  ],
};

// ListGroups{Request,Response}.json: validVersions 0-4 (3+ flexible). Served 0-2.
export const LIST_GROUPS: ApiSpec = {
  key: 16,
  name: 'ListGroups',
  minVersion: 0,
  maxVersion: 2,
  flexibleFrom: 3,
  request: [],
  response: [
    field('throttleTimeMs', 'int32', '1+'),
    field('errorCode', 'int16', '0+'),
    arrayOf('groups', [field('groupId', 'string', '0+'), field('protocolType', 'string', '0+')], '0+'),
  ],
};

// DeleteGroups{Request,Response}.json: validVersions 0-3 (2+ flexible; 3 adds a per-group error message). Served
// 0-2: librdkafka and kafkajs send 0-1, the Java client 2.
export const DELETE_GROUPS: ApiSpec = {
  key: 42,
  name: 'DeleteGroups',
  minVersion: 0,
  maxVersion: 2,
  flexibleFrom: 2,
  request: [arrayOf('groupsNames', 'string', '0+')],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    arrayOf('results', [field('groupId', 'string', '0+'), field('errorCode', 'int16', '0+')], '0+'),
  ],
};

// OffsetDelete{Request,Response}.json: validVersions 0 (1, flexible, is KIP-1313's and newer than every client
// here). Served 0.
export const OFFSET_DELETE: ApiSpec = {
  key: 47,
  name: 'OffsetDelete',
  minVersion: 0,
  maxVersion: 0,
  flexibleFrom: undefined,
  request: [
    field('groupId', 'string', '0+'),
    arrayOf(
      'topics',
      [field('name', 'string', '0+'), arrayOf('partitions', [field('partitionIndex', 'int32', '0+')], '0+')],
      '0+',
    ),
  ],
  response: [
    field('errorCode', 'int16', '0+'),
    field('throttleTimeMs', 'int32', '0+'),
    arrayOf(
      'topics',
      [
        field('name', 'string', '0+'),
        arrayOf('partitions', [field('partitionIndex', 'int32', '0+'), field('errorCode', 'int16', '0+')], '0+'),
      ],
      '0+',
    ),
  ],
};
