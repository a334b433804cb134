import type { Struct } from '../schema.js';

/**
 * One API as this codec serves it: the versions it accepts (a sub-range of
 * Kafka's validVersions), where flexible versions start, and the request and
 * response schemas over that range.
 */
export interface ApiSpec {
  readonly key: number;
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  /** The first flexible version (the spec's flexibleVersions); undefined when none is served. */
  readonly flexibleFrom: number | undefined;
  readonly request: Struct;
  readonly response: Struct;
}

export function isFlexible(spec: ApiSpec, version: number): boolean {
  return spec.flexibleFrom !== undefined && version >= spec.flexibleFrom;
}
