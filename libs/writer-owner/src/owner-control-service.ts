import { OwnerControlService } from '@ledgerline/proto';
import type { ServiceImpl } from '@ledgerline/rpc';
import type { WriterOwner } from './writer-owner.js';

/** ledgerline.v1.OwnerControlService over a WriterOwner: transfers, the target's load, drains. */
export function ownerControlServiceImpl(owner: WriterOwner): ServiceImpl<typeof OwnerControlService> {
  return {
    async transferTopic(request) {
      const moved = await owner.transfer(request.topic, request.targetInstanceId);
      return {
        targetInstanceId: moved.targetInstanceId,
        targetAddress: moved.targetAddress,
        pausedMs: BigInt(moved.pausedMs),
      };
    },
    async loadTopic(request) {
      // Only a transfer asks: its source handed the lease to this owner already.
      await owner.topic(request.topic, { leaseHandedOver: true });
      return {};
    },
    async drainOwner(request) {
      return owner.drainTopics(request.resume);
    },
  };
}
