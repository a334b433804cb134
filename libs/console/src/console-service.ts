import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { ConsoleService } from '@ledgerline/proto';
import { Caller } from './caller.js';
import type { ConsoleContext } from './console-context.js';
import { collectorSummary } from './collector-summary.js';
import { listKafkaGroups } from './kafka-groups.js';
import { browseMessages } from './message-browser.js';
import { overview } from './overview.js';
import { produceMessage } from './produce.js';
import { listAckRanges, subscriptionSummary } from './subscription-summary.js';
import { getNamespaceSummary, listTenantSummaries } from './tenants.js';
import { browseTopics } from './topics-page.js';
import { topicSummary } from './topic-summary.js';
import { whoAmI } from './whoami.js';

/**
 * ConsoleService: each page's RPC, answered with the caller's own token
 * forwarded to the services (caller.ts), so every check is theirs.
 */
export function consoleServiceImpl(context: ConsoleContext): ServiceImpl<typeof ConsoleService> {
  const caller = (handler: HandlerContext) => Caller.fromHeaders(handler.requestHeader, context.callDeadlineMs);
  return {
    whoAmI: (_request, handler) => whoAmI(context, caller(handler)),
    getOverview: (_request, handler) => overview(context, caller(handler)),
    listTenantSummaries: (_request, handler) => listTenantSummaries(context, caller(handler)),
    getNamespaceSummary: (request, handler) => getNamespaceSummary(context, caller(handler), request.namespace),
    browseTopics: (request, handler) => browseTopics(context, caller(handler), request),
    getTopicSummary: (request, handler) => topicSummary(context, caller(handler), request.topic),
    getSubscriptionSummary: (request, handler) => subscriptionSummary(context, caller(handler), request),
    listAckRanges: (request, handler) => listAckRanges(context, caller(handler), request),
    browseMessages: (request, handler) => browseMessages(context, caller(handler), request),
    produceMessage: (request, handler) => produceMessage(context, caller(handler), request),
    getCollectorSummary: (request, handler) => collectorSummary(context, caller(handler), request),
    listKafkaGroups: (request, handler) => listKafkaGroups(context, caller(handler), request),
  };
}
