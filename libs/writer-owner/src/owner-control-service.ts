import { OwnerControlService } from '@ledgerline/proto';
import type { ServiceImpl } from '@ledgerline/rpc';
import { handOverStateFromProto } from './hand-over-state.js';
import type { ControlledOwner } from './owner-view.js';

/** ledgerline.v1.OwnerControlService over a writer owner: transfers, the target's load, drains. */
export function ownerControlServiceImpl(owner: ControlledOwner): ServiceImpl<typeof OwnerControlService> {
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
      // Only a transfer asks: its source handed the lease to this owner already, and says what its close left.
      const handedOver = handOverStateFromProto(request.handedOver);
      await owner.topic(request.topic, { leaseHandedOver: true, ...(handedOver === undefined ? {} : { handedOver }) });
      return {};
    },
    async drainOwner(request) {
      return owner.drainTopics(request.resume);
    },
  };
}
