import { hostname } from 'node:os';

/** Who an owner is to the metadata service and to clients: what it registers its session with. */
export interface OwnerIdentity {
  instanceId: string;
  group: string;
  advertisedAddress: string;
}

/** What an owner's identity is made from: its settings, and the port it serves on. */
export interface OwnerIdentitySettings {
  instanceId: string;
  ownerGroup: string;
  advertisedAddress: string;
}

/**
 * The identity an owner registers with: the advertised address defaults to
 * localhost and the port; the instance id defaults to role, host and address.
 */
export function ownerIdentity(role: string, settings: OwnerIdentitySettings, port: number): OwnerIdentity {
  const advertisedAddress = settings.advertisedAddress === '' ? `localhost:${port}` : settings.advertisedAddress;
  const derived = `${role}-${hostname()}-${advertisedAddress}`.replace(/[^A-Za-z0-9_.:-]/g, '-').slice(0, 128);
  return {
    instanceId: settings.instanceId === '' ? derived : settings.instanceId,
    group: settings.ownerGroup,
    advertisedAddress,
  };
}
