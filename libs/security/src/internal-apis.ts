import { LedgerlineError } from '@ledgerline/errors';
import type { PeerCertificate } from 'node:tls';
import { certificateNames, serviceIdentities, ServiceIdentity } from './service-identity.js';
import { SecurityReason } from './security-reason.js';

const { WRITER_OWNER, READONLY_OWNER, GARBAGE_COLLECTOR, KAFKA_GATEWAY } = ServiceIdentity;
const OWNERS = [WRITER_OWNER, READONLY_OWNER] as const;
/** Gateways register too, so that they find each other (group coordinators), but take no lease. */
const REGISTERED = [...OWNERS, KAFKA_GATEWAY] as const;

/**
 * The internal APIs and the service identities that may call them
 * (docs/architecture.md, "Who calls whom"): the metadata store API, Lookup's
 * owner and lease calls, AllocateLedgerId, CursorsService and
 * GarbageCollectorService. A method listed here refuses every caller without
 * a verified certificate naming one of its services; `*` covers every method
 * of a service.
 */
export const INTERNAL_API_CALLERS: Readonly<Record<string, readonly ServiceIdentity[]>> = {
  // Owners load and store managed-ledger and cursor metadata; the collector reads and clears deletion markers.
  '/ledgerline.v1.MetadataStoreService/*': [...OWNERS, GARBAGE_COLLECTOR],
  '/ledgerline.v1.LookupService/RegisterOwner': REGISTERED,
  '/ledgerline.v1.LookupService/KeepAliveOwner': REGISTERED,
  '/ledgerline.v1.LookupService/WatchOwnerSession': REGISTERED,
  '/ledgerline.v1.LookupService/UnregisterOwner': REGISTERED,
  '/ledgerline.v1.LookupService/AcquireLease': OWNERS,
  '/ledgerline.v1.LookupService/RenewLease': OWNERS,
  '/ledgerline.v1.LookupService/ConfirmLeases': OWNERS,
  '/ledgerline.v1.LookupService/ReleaseLease': OWNERS,
  '/ledgerline.v1.LookupService/GetLease': OWNERS,
  '/ledgerline.v1.LookupService/TransferLease': OWNERS,
  '/ledgerline.v1.LookupService/ReclaimLease': OWNERS,
  '/ledgerline.v1.LookupService/SetOwnerDraining': OWNERS,
  // The source of a transfer has its target load the topic.
  '/ledgerline.v1.OwnerControlService/LoadTopic': OWNERS,
  // Only the writer opens ledgers.
  '/ledgerline.v1.LookupService/AllocateLedgerId': [WRITER_OWNER],
  // Read-only owners keep their subscriptions' cursors on the writer (PIP-63); a Kafka group's commits are cursors.
  '/ledgerline.v1.CursorsService/*': REGISTERED,
  // The collector finishes a topic deletion once its ledgers are gone.
  '/ledgerline.v1.AdminService/FinishTopicDeletion': [GARBAGE_COLLECTOR],
  // Operators reach the collector with a service certificate (`ledgerline certs dev` makes one for it).
  '/ledgerline.v1.GarbageCollectorService/*': [GARBAGE_COLLECTOR],
};

/** The services that may call `method`, or undefined when it is not an internal API. */
export function internalApiCallers(method: string): readonly ServiceIdentity[] | undefined {
  return INTERNAL_API_CALLERS[method] ?? INTERNAL_API_CALLERS[`${method.slice(0, method.lastIndexOf('/'))}/*`];
}

/**
 * Refuses a call to an internal API unless the caller's verified certificate
 * names a service that may make it: UNAUTHENTICATED /
 * SERVICE_CERTIFICATE_REQUIRED without a verified certificate,
 * PERMISSION_DENIED / SERVICE_NOT_ALLOWED for any other certificate.
 */
export function checkInternalCall(method: string, certificate: PeerCertificate | undefined): void {
  const allowed = internalApiCallers(method);
  if (allowed === undefined) return;
  if (certificate === undefined) {
    throw new LedgerlineError(
      'UNAUTHENTICATED',
      SecurityReason.SERVICE_CERTIFICATE_REQUIRED,
      `${method} is an internal API: call it over mutual TLS with a Ledgerline service certificate (${allowed.join(', ')}) issued by the cluster's CA`,
      { details: { method, allowed: allowed.join(',') } },
    );
  }
  const identities = serviceIdentities(certificate);
  if (!identities.some((identity) => allowed.includes(identity))) {
    const names = certificateNames(certificate).slice(0, 4).join(', ');
    throw new LedgerlineError(
      'PERMISSION_DENIED',
      SecurityReason.SERVICE_NOT_ALLOWED,
      `${method} is an internal API that only ${allowed.join(', ')} may call; the client certificate names ${names || 'no service'}`,
      { details: { method, allowed: allowed.join(','), caller: names } },
    );
  }
}
