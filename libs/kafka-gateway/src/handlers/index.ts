import { ApiKey } from '@ledgerline/kafka-protocol';
import type { ApiHandler } from '../session.js';
import { handleAlterConfigs, handleIncrementalAlterConfigs } from './alter-configs.js';
import { handleCreatePartitions } from './create-partitions.js';
import { handleDeleteRecords } from './delete-records.js';
import { handleDescribeProducers } from './describe-producers.js';
import { handleFetch } from './fetch.js';
import { handleDeleteGroups, handleOffsetDelete } from './group-admin.js';
import {
  handleDescribeGroups,
  handleFindCoordinator,
  handleHeartbeat,
  handleJoinGroup,
  handleLeaveGroup,
  handleListGroups,
  handleSyncGroup,
} from './groups.js';
import { handleApiVersions, handleInitProducerId, handleSaslAuthenticate, handleSaslHandshake } from './handshake.js';
import { handleListOffsets } from './list-offsets.js';
import { handleDescribeCluster, handleMetadata } from './metadata.js';
import { handleOffsetFetch } from './offset-fetch.js';
import { handleOffsetCommit } from './offsets.js';
import { handleProduce } from './produce.js';
import { handleCreateTopics, handleDeleteTopics, handleDescribeConfigs } from './topics-admin.js';

/** Every API the codec has a schema for has its handler here. */
export const API_HANDLERS: ReadonlyMap<number, ApiHandler> = new Map<number, ApiHandler>([
  [ApiKey.Produce, handleProduce],
  [ApiKey.Fetch, handleFetch],
  [ApiKey.ListOffsets, handleListOffsets],
  [ApiKey.Metadata, handleMetadata],
  [ApiKey.OffsetCommit, handleOffsetCommit],
  [ApiKey.OffsetFetch, handleOffsetFetch],
  [ApiKey.FindCoordinator, handleFindCoordinator],
  [ApiKey.JoinGroup, handleJoinGroup],
  [ApiKey.Heartbeat, handleHeartbeat],
  [ApiKey.LeaveGroup, handleLeaveGroup],
  [ApiKey.SyncGroup, handleSyncGroup],
  [ApiKey.DescribeGroups, handleDescribeGroups],
  [ApiKey.ListGroups, handleListGroups],
  [ApiKey.SaslHandshake, handleSaslHandshake],
  [ApiKey.ApiVersions, handleApiVersions],
  [ApiKey.CreateTopics, handleCreateTopics],
  [ApiKey.DeleteTopics, handleDeleteTopics],
  [ApiKey.DeleteRecords, handleDeleteRecords],
  [ApiKey.InitProducerId, handleInitProducerId],
  [ApiKey.DescribeConfigs, handleDescribeConfigs],
  [ApiKey.SaslAuthenticate, handleSaslAuthenticate],
  [ApiKey.AlterConfigs, handleAlterConfigs],
  [ApiKey.CreatePartitions, handleCreatePartitions],
  [ApiKey.DeleteGroups, handleDeleteGroups],
  [ApiKey.IncrementalAlterConfigs, handleIncrementalAlterConfigs],
  [ApiKey.OffsetDelete, handleOffsetDelete],
  [ApiKey.DescribeCluster, handleDescribeCluster],
  [ApiKey.DescribeProducers, handleDescribeProducers],
]);

export { unsupportedApiVersionsBody } from './handshake.js';
