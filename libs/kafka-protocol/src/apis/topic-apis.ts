import { arrayOf, field } from '../schema.js';
import type { ApiSpec } from './api-spec.js';

// Metadata{Request,Response}.json: validVersions 0-12 (9+ flexible), served 0-12. v10 adds topic ids, v11
// drops the cluster's authorized operations (DescribeCluster has them), v12 looks topics up by id (a null name).
// Versions 10 and 11 carry an id and a nullable name, which the spec says clients must not use: the gateway
// answers such a topic INVALID_REQUEST.
export const METADATA: ApiSpec = {
  key: 3,
  name: 'Metadata',
  minVersion: 0,
  maxVersion: 12,
  flexibleFrom: 9,
  request: [
    // v0 has no null topic list (an empty one means all topics); v1+ sends null for all topics.
    arrayOf('topics', [field('topicId', 'uuid', '10+'), field('name', 'string', '0+', { nullable: '10+' })], '0+', {
      nullable: '1+',
    }),
    field('allowAutoTopicCreation', 'bool', '4+', { default: true }),
    field('includeClusterAuthorizedOperations', 'bool', '8-10'),
    field('includeTopicAuthorizedOperations', 'bool', '8+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '3+'),
    arrayOf(
      'brokers',
      [
        field('nodeId', 'int32', '0+'),
        field('host', 'string', '0+'),
        field('port', 'int32', '0+'),
        field('rack', 'string', '1+', { nullable: '1+', default: null }),
      ],
      '0+',
    ),
    field('clusterId', 'string', '2+', { nullable: '2+', default: null }),
    field('controllerId', 'int32', '1+', { default: -1 }),
    arrayOf(
      'topics',
      [
        field('errorCode', 'int16', '0+'),
        field('name', 'string', '0+', { nullable: '12+' }),
        field('topicId', 'uuid', '10+'),
        field('isInternal', 'bool', '1+'),
        arrayOf(
          'partitions',
          [
            field('errorCode', 'int16', '0+'),
            field('partitionIndex', 'int32', '0+'),
            field('leaderId', 'int32', '0+'),
            field('leaderEpoch', 'int32', '7+', { default: -1 }),
            arrayOf('replicaNodes', 'int32', '0+'),
            arrayOf('isrNodes', 'int32', '0+'),
            arrayOf('offlineReplicas', 'int32', '5+'),
          ],
          '0+',
        ),
        field('topicAuthorizedOperations', 'int32', '8+', { default: -2147483648 }),
      ],
      '0+',
    ),
    field('clusterAuthorizedOperations', 'int32', '8-10', { default: -2147483648 }),
  ],
};

// CreateTopics{Request,Response}.json: validVersions 0-7 (5+ flexible), served 0-4 (v4 is v3's layout).
export const CREATE_TOPICS: ApiSpec = {
  key: 19,
  name: 'CreateTopics',
  minVersion: 0,
  maxVersion: 4,
  flexibleFrom: 5,
  request: [
    arrayOf(
      'topics',
      [
        field('name', 'string', '0+'),
        field('numPartitions', 'int32', '0+'),
        field('replicationFactor', 'int16', '0+'),
        arrayOf('assignments', [field('partitionIndex', 'int32', '0+'), arrayOf('brokerIds', 'int32', '0+')], '0+'),
        arrayOf(
          'configs',
          [field('name', 'string', '0+'), field('value', 'string', '0+', { nullable: '0+', default: null })],
          '0+',
        ),
      ],
      '0+',
    ),
    field('timeoutMs', 'int32', '0+', { default: 60000 }),
    field('validateOnly', 'bool', '1+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '2+'),
    arrayOf(
      'topics',
      [
        field('name', 'string', '0+'),
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '1+', { nullable: '0+', default: null }),
      ],
      '0+',
    ),
  ],
};

// DeleteTopics{Request,Response}.json: validVersions 0-6 (4+ flexible), served 0-3.
export const DELETE_TOPICS: ApiSpec = {
  key: 20,
  name: 'DeleteTopics',
  minVersion: 0,
  maxVersion: 3,
  flexibleFrom: 4,
  request: [arrayOf('topicNames', 'string', '0+'), field('timeoutMs', 'int32', '0+')],
  response: [
    field('throttleTimeMs', 'int32', '1+'),
    arrayOf('responses', [field('name', 'string', '0+'), field('errorCode', 'int16', '0+')], '0+'),
  ],
};

// DescribeConfigs{Request,Response}.json: validVersions 0-4 (4+ flexible), served 0-3.
export const DESCRIBE_CONFIGS: ApiSpec = {
  key: 32,
  name: 'DescribeConfigs',
  minVersion: 0,
  maxVersion: 3,
  flexibleFrom: 4,
  request: [
    arrayOf(
      'resources',
      [
        field('resourceType', 'int8', '0+'),
        field('resourceName', 'string', '0+'),
        arrayOf('configurationKeys', 'string', '0+', { nullable: '0+', default: null }),
      ],
      '0+',
    ),
    field('includeSynonyms', 'bool', '1+'),
    field('includeDocumentation', 'bool', '3+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    arrayOf(
      'results',
      [
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
        field('resourceType', 'int8', '0+'),
        field('resourceName', 'string', '0+'),
        arrayOf(
          'configs',
          [
            field('name', 'string', '0+'),
            field('value', 'string', '0+', { nullable: '0+', default: null }),
            field('readOnly', 'bool', '0+'),
            field('isDefault', 'bool', '0'),
            field('configSource', 'int8', '1+', { default: -1 }),
            field('isSensitive', 'bool', '0+'),
            arrayOf(
              'synonyms',
              [
                field('name', 'string', '1+'),
                field('value', 'string', '1+', { nullable: '1+', default: null }),
                field('source', 'int8', '1+'),
              ],
              '1+',
            ),
            field('configType', 'int8', '3+'),
            field('documentation', 'string', '3+', { nullable: '0+', default: null }),
          ],
          '0+',
        ),
      ],
      '0+',
    ),
  ],
};

// CreatePartitions{Request,Response}.json: validVersions 0-3 (2+ flexible), all served (v1 and v3 change only how
// a quota throttles, which the gateway does not do).
export const CREATE_PARTITIONS: ApiSpec = {
  key: 37,
  name: 'CreatePartitions',
  minVersion: 0,
  maxVersion: 3,
  flexibleFrom: 2,
  request: [
    arrayOf(
      'topics',
      [
        field('name', 'string', '0+'),
        field('count', 'int32', '0+'),
        arrayOf('assignments', [arrayOf('brokerIds', 'int32', '0+')], '0+', { nullable: '0+', default: null }),
      ],
      '0+',
    ),
    field('timeoutMs', 'int32', '0+'),
    field('validateOnly', 'bool', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    arrayOf(
      'results',
      [
        field('name', 'string', '0+'),
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
      ],
      '0+',
    ),
  ],
};

/** The resources AlterConfigs and IncrementalAlterConfigs answer: the error and the resource, in every version. */
const alterConfigsResponses = arrayOf(
  'responses',
  [
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    field('resourceType', 'int8', '0+'),
    field('resourceName', 'string', '0+'),
  ],
  '0+',
);

// AlterConfigs{Request,Response}.json: validVersions 0-2 (2+ flexible), all served (v1 changes only how a quota
// throttles). kafkajs sends 0-1, librdkafka up to 2.
export const ALTER_CONFIGS: ApiSpec = {
  key: 33,
  name: 'AlterConfigs',
  minVersion: 0,
  maxVersion: 2,
  flexibleFrom: 2,
  request: [
    arrayOf(
      'resources',
      [
        field('resourceType', 'int8', '0+'),
        field('resourceName', 'string', '0+'),
        arrayOf(
          'configs',
          [field('name', 'string', '0+'), field('value', 'string', '0+', { nullable: '0+', default: null })],
          '0+',
        ),
      ],
      '0+',
    ),
    field('validateOnly', 'bool', '0+'),
  ],
  response: [field('throttleTimeMs', 'int32', '0+'), alterConfigsResponses],
};

// IncrementalAlterConfigs{Request,Response}.json: validVersions 0-1 (1+ flexible), all served. librdkafka 2.x sends
// both; the Java client's incrementalAlterConfigs 1.
export const INCREMENTAL_ALTER_CONFIGS: ApiSpec = {
  key: 44,
  name: 'IncrementalAlterConfigs',
  minVersion: 0,
  maxVersion: 1,
  flexibleFrom: 1,
  request: [
    arrayOf(
      'resources',
      [
        field('resourceType', 'int8', '0+'),
        field('resourceName', 'string', '0+'),
        arrayOf(
          'configs',
          [
            field('name', 'string', '0+'),
            field('configOperation', 'int8', '0+'),
            field('value', 'string', '0+', { nullable: '0+', default: null }),
          ],
          '0+',
        ),
      ],
      '0+',
    ),
    field('validateOnly', 'bool', '0+'),
  ],
  response: [field('throttleTimeMs', 'int32', '0+'), alterConfigsResponses],
};

// DescribeCluster{Request,Response}.json: validVersions 0-1 (all flexible; 1 adds the endpoint type, brokers or
// KRaft controllers, which a gateway has none of). Served 0: librdkafka 2.3+ and the Java client 3.x send it.
export const DESCRIBE_CLUSTER: ApiSpec = {
  key: 60,
  name: 'DescribeCluster',
  minVersion: 0,
  maxVersion: 0,
  flexibleFrom: 0,
  request: [field('includeClusterAuthorizedOperations', 'bool', '0+')],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    field('clusterId', 'string', '0+'),
    field('controllerId', 'int32', '0+', { default: -1 }),
    arrayOf(
      'brokers',
      [
        field('brokerId', 'int32', '0+'),
        field('host', 'string', '0+'),
        field('port', 'int32', '0+'),
        field('rack', 'string', '0+', { nullable: '0+', default: null }),
      ],
      '0+',
    ),
    field('clusterAuthorizedOperations', 'int32', '0+', { default: -2147483648 }),
  ],
};
