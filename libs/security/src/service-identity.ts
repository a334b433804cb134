import type { PeerCertificate } from 'node:tls';

/** The service identities Ledgerline's own certificates carry (subject CN or a SAN). */
export const ServiceIdentity = {
  METADATA: 'metadata',
  WRITER_OWNER: 'writer-owner',
  READONLY_OWNER: 'readonly-owner',
  GARBAGE_COLLECTOR: 'garbage-collector',
  KAFKA_GATEWAY: 'kafka-gateway',
} as const;

export type ServiceIdentity = (typeof ServiceIdentity)[keyof typeof ServiceIdentity];

const SERVICE_IDENTITIES: ReadonlySet<string> = new Set(Object.values(ServiceIdentity));

/** A SPIFFE-style URI SAN names a service too: `spiffe://<trust domain>/<service>`. */
const SPIFFE = /^spiffe:\/\/[^/]+\/(.+)$/;

/** Every name a certificate carries: its subject CN, DNS SANs and the last segment of URI SANs. */
export function certificateNames(certificate: PeerCertificate): string[] {
  const names: string[] = [];
  const commonName = certificate.subject?.CN;
  if (typeof commonName === 'string') names.push(commonName);
  else if (Array.isArray(commonName)) names.push(...(commonName as string[]));
  for (const entry of (certificate.subjectaltname ?? '').split(',')) {
    const [kind, ...rest] = entry.trim().split(':');
    const value = rest.join(':');
    if (kind === 'DNS') names.push(value);
    if (kind === 'URI') names.push(SPIFFE.exec(value)?.[1] ?? value);
  }
  return names;
}

/** The Ledgerline service identities a verified certificate names (none for a plain client's). */
export function serviceIdentities(certificate: PeerCertificate | undefined): ServiceIdentity[] {
  if (certificate === undefined) return [];
  return [
    ...new Set(certificateNames(certificate).filter((name) => SERVICE_IDENTITIES.has(name))),
  ] as ServiceIdentity[];
}
