import { arrayOf, field } from '../schema.js';
import type { ApiSpec } from './api-spec.js';

// DescribeProducers{Request,Response}.json (KIP-664): validVersions 0, flexible from 0. Served 0: the active
// idempotent producers of each partition, as the Java admin client's describeProducers and kafka-transactions.sh
// ask for them.
export const DESCRIBE_PRODUCERS: ApiSpec = {
  key: 61,
  name: 'DescribeProducers',
  minVersion: 0,
  maxVersion: 0,
  flexibleFrom: 0,
  request: [arrayOf('topics', [field('name', 'string', '0+'), arrayOf('partitionIndexes', 'int32', '0+')], '0+')],
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
            field('errorCode', 'int16', '0+'),
            field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
            arrayOf(
              'activeProducers',
              [
                field('producerId', 'int64', '0+'),
                field('producerEpoch', 'int32', '0+'),
                field('lastSequence', 'int32', '0+', { default: -1 }),
                field('lastTimestamp', 'int64', '0+', { default: -1n }),
                field('coordinatorEpoch', 'int32', '0+'),
                field('currentTxnStartOffset', 'int64', '0+', { default: -1n }),
              ],
              '0+',
            ),
          ],
          '0+',
        ),
      ],
      '0+',
    ),
  ],
};
