import { SubscriptionType } from '@gen/topics_pb';

export const SUBSCRIPTION_TYPE_NAMES: Record<number, string> = {
  [SubscriptionType.EXCLUSIVE]: 'Exclusive',
  [SubscriptionType.FAILOVER]: 'Failover',
  [SubscriptionType.SHARED]: 'Shared',
  [SubscriptionType.KEY_SHARED]: 'Key_Shared',
};
