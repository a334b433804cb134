import { LedgerlineError } from '@ledgerline/errors';
import type { Logger } from '@ledgerline/service-kit';
import { backOff } from 'exponential-backoff';
import type { LedgerlineBackend } from './ledgerline-backend.js';
import { ANONYMOUS } from './owner-router.js';
import type { KafkaGatewaySettings } from './settings.js';

/** Waits between tries while the metadata service cannot be reached: from this, doubling up to the max. */
const FIRST_RETRY_MS = 200;
const MAX_RETRY_MS = 5_000;

/**
 * Creates the Kafka home tenant and namespace when missing (kafkaCreateNamespace),
 * the namespace with allowAutoTopicCreation as kafkaAutoCreateTopics says. While
 * the metadata service cannot be reached it tries again, until `signal` aborts:
 * a gateway that started before the metadata service would otherwise answer
 * every Metadata request for its topics with an unknown namespace for good. A
 * refusal (an admin restricted it) is logged and ends the tries.
 */
export async function ensureKafkaNamespace(
  backend: Pick<LedgerlineBackend, 'ensureNamespace'>,
  settings: Pick<KafkaGatewaySettings, 'kafkaTenant' | 'kafkaNamespace' | 'kafkaAutoCreateTopics'>,
  logger: Pick<Logger, 'info' | 'warn'>,
  signal: AbortSignal,
): Promise<boolean> {
  const namespace = `${settings.kafkaTenant}/${settings.kafkaNamespace}`;
  // Kafka's own topics live here, so it allows auto-creation as the gateway does (auto.create.topics.enable).
  const policies = { allowAutoTopicCreation: settings.kafkaAutoCreateTopics };
  try {
    await backOff(() => backend.ensureNamespace(settings.kafkaTenant, settings.kafkaNamespace, policies, ANONYMOUS), {
      numOfAttempts: Number.MAX_SAFE_INTEGER,
      startingDelay: FIRST_RETRY_MS,
      maxDelay: MAX_RETRY_MS,
      retry: (error: unknown, attempt: number) => {
        // Unreachable or too slow: the metadata service may still be starting (pods coming up together).
        if (signal.aborted || !LedgerlineError.from(error).retryable) return false;
        if (attempt === 1)
          logger.warn({ err: error, namespace }, 'the Kafka namespace cannot be created yet: retrying');
        return true;
      },
    });
    return true;
  } catch (error) {
    if (!signal.aborted) logger.warn({ err: error, namespace }, 'the Kafka namespace could not be created');
    return false;
  }
}
