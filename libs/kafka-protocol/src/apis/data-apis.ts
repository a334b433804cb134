import { arrayOf, field } from '../schema.js';
import type { ApiSpec } from './api-spec.js';

// Produce{Request,Response}.json: validVersions 0-8 (9+ flexible in later specs). Served 3-8: the
// versions that carry RecordBatch v2 (magic 2), which is all the gateway stores.
export const PRODUCE: ApiSpec = {
  key: 0,
  name: 'Produce',
  minVersion: 3,
  maxVersion: 8,
  flexibleFrom: 9,
  request: [
    field('transactionalId', 'string', '3+', { nullable: '0+', default: null }),
    field('acks', 'int16', '0+'),
    field('timeoutMs', 'int32', '0+'),
    arrayOf(
      'topics',
      [
        field('name', 'string', '0+'),
        arrayOf('partitions', [field('partitionIndex', 'int32', '0+'), field('records', 'records', '0+')], '0+'),
      ],
      '0+',
    ),
  ],
  response: [
    arrayOf(
      'responses',
      [
        field('name', 'string', '0+'),
        arrayOf(
          'partitions',
          [
            field('partitionIndex', 'int32', '0+'),
            field('errorCode', 'int16', '0+'),
            field('baseOffset', 'int64', '0+'),
            field('logAppendTimeMs', 'int64', '2+', { default: -1n }),
            field('logStartOffset', 'int64', '5+', { default: -1n }),
            arrayOf(
              'recordErrors',
              [
                field('batchIndex', 'int32', '8+'),
                field('batchIndexErrorMessage', 'string', '8+', { nullable: '8+', default: null }),
              ],
              '8+',
            ),
            field('errorMessage', 'string', '8+', { nullable: '8+', default: null }),
          ],
          '0+',
        ),
      ],
      '0+',
    ),
    field('throttleTimeMs', 'int32', '1+'),
  ],
};

// Fetch{Request,Response}.json: validVersions 4-17 (0-3 dropped in Kafka 4.0), flexible from 12. Served 4-17:
// from 4 on a consumer reads RecordBatch v2. v12 is flexible and adds LastFetchedEpoch and the tagged ClusterId,
// and a partition's tagged DivergingEpoch, CurrentLeader and SnapshotId (a follower's; never sent here). v13
// names topics by id instead of by name, fetched and forgotten, request and answer (KIP-516). v14 only adds an
// error a consumer never gets (OFFSET_MOVED_TO_TIERED_STORAGE); v15 moves a follower's id into the tagged
// ReplicaState (a consumer sends neither); v16 adds the tagged NodeEndpoints an answer of NOT_LEADER_OR_FOLLOWER
// carries (KIP-951: never answered here); v17 a follower's tagged ReplicaDirectoryId, skipped as unknown tags are.
export const FETCH: ApiSpec = {
  key: 1,
  name: 'Fetch',
  minVersion: 4,
  maxVersion: 17,
  flexibleFrom: 12,
  request: [
    field('clusterId', 'string', '12+', { nullable: '12+', default: null, tag: 0 }),
    field('replicaId', 'int32', '0-14', { default: -1 }),
    field('replicaState', [field('replicaId', 'int32', '15+'), field('replicaEpoch', 'int64', '15+')], '15+', {
      default: null,
      tag: 1,
    }),
    field('maxWaitMs', 'int32', '0+'),
    field('minBytes', 'int32', '0+'),
    field('maxBytes', 'int32', '3+', { default: 0x7fffffff }),
    field('isolationLevel', 'int8', '4+'),
    field('sessionId', 'int32', '7+'),
    field('sessionEpoch', 'int32', '7+', { default: -1 }),
    arrayOf(
      'topics',
      [
        field('name', 'string', '0-12'),
        field('topicId', 'uuid', '13+'),
        arrayOf(
          'partitions',
          [
            field('partitionIndex', 'int32', '0+'),
            field('currentLeaderEpoch', 'int32', '9+', { default: -1 }),
            field('fetchOffset', 'int64', '0+'),
            field('lastFetchedEpoch', 'int32', '12+', { default: -1 }),
            field('logStartOffset', 'int64', '5+', { default: -1n }),
            field('partitionMaxBytes', 'int32', '0+'),
          ],
          '0+',
        ),
      ],
      '0+',
    ),
    arrayOf(
      'forgotten',
      [field('name', 'string', '7-12'), field('topicId', 'uuid', '13+'), arrayOf('partitions', 'int32', '7+')],
      '7+',
    ),
    field('rackId', 'string', '11+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '1+'),
    field('errorCode', 'int16', '7+'),
    field('sessionId', 'int32', '7+'),
    arrayOf(
      'responses',
      [
        field('topic', 'string', '0-12'),
        field('topicId', 'uuid', '13+'),
        arrayOf(
          'partitions',
          [
            field('partitionIndex', 'int32', '0+'),
            field('errorCode', 'int16', '0+'),
            field('highWatermark', 'int64', '0+'),
            field('lastStableOffset', 'int64', '4+', { default: -1n }),
            field('logStartOffset', 'int64', '5+', { default: -1n }),
            field('currentLeader', [field('leaderId', 'int32', '12+'), field('leaderEpoch', 'int32', '12+')], '12+', {
              default: null,
              tag: 1,
            }),
            arrayOf(
              'abortedTransactions',
              [field('producerId', 'int64', '4+'), field('firstOffset', 'int64', '4+')],
              '4+',
              { nullable: '4+', default: null },
            ),
            field('preferredReadReplica', 'int32', '11+', { default: -1 }),
            field('records', 'records', '0+'),
          ],
          '0+',
        ),
      ],
      '0+',
    ),
    arrayOf(
      'nodeEndpoints',
      [
        field('nodeId', 'int32', '16+'),
        field('host', 'string', '16+'),
        field('port', 'int32', '16+'),
        field('rack', 'string', '16+', { nullable: '16+', default: null }),
      ],
      '16+',
      { default: null, tag: 0 },
    ),
  ],
};

// ListOffsets{Request,Response}.json: validVersions 0-8 (6+ flexible). Served 0-5.
export const LIST_OFFSETS: ApiSpec = {
  key: 2,
  name: 'ListOffsets',
  minVersion: 0,
  maxVersion: 5,
  flexibleFrom: 6,
  request: [
    field('replicaId', 'int32', '0+'),
    field('isolationLevel', 'int8', '2+'),
    arrayOf(
      'topics',
      [
        field('name', 'string', '0+'),
        arrayOf(
          'partitions',
          [
            field('partitionIndex', 'int32', '0+'),
            field('currentLeaderEpoch', 'int32', '4+', { default: -1 }),
            field('timestamp', 'int64', '0+'),
            field('maxNumOffsets', 'int32', '0', { default: 1 }),
          ],
          '0+',
        ),
      ],
      '0+',
    ),
  ],
  response: [
    field('throttleTimeMs', 'int32', '2+'),
    arrayOf(
      'topics',
      [
        field('name', 'string', '0+'),
        arrayOf(
          'partitions',
          [
            field('partitionIndex', 'int32', '0+'),
            field('errorCode', 'int16', '0+'),
            arrayOf('oldStyleOffsets', 'int64', '0'),
            field('timestamp', 'int64', '1+', { default: -1n }),
            field('offset', 'int64', '1+', { default: -1n }),
            field('leaderEpoch', 'int32', '4+', { default: -1 }),
          ],
          '0+',
        ),
      ],
      '0+',
    ),
  ],
};

// DeleteRecords{Request,Response}.json: validVersions 0-2 (2+ flexible), all served (v1 changes only how a quota
// throttles). kafkajs sends 0-1, librdkafka and the Java client up to 2.
export const DELETE_RECORDS: ApiSpec = {
  key: 21,
  name: 'DeleteRecords',
  minVersion: 0,
  maxVersion: 2,
  flexibleFrom: 2,
  request: [
    arrayOf(
      'topics',
      [
        field('name', 'string', '0+'),
        arrayOf('partitions', [field('partitionIndex', 'int32', '0+'), field('offset', 'int64', '0+')], '0+'),
      ],
      '0+',
    ),
    field('timeoutMs', 'int32', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    arrayOf(
      'topics',
      [
        field('name', 'string', '0+'),
        arrayOf(
          'partitions',
          [
            field('partitionIndex', 'int32', '0+'),
            field('lowWatermark', 'int64', '0+'),
            field('errorCode', 'int16', '0+'),
          ],
          '0+',
        ),
      ],
      '0+',
    ),
  ],
};
