import { arrayOf, field } from '../schema.js';
import type { ApiSpec } from './api-spec.js';

// From apache/kafka clients/src/main/resources/common/message/ApiVersions{Request,Response}.json
// (validVersions 0-3 served, flexibleVersions 3+). The response header stays v0 in every version (KIP-511).
export const API_VERSIONS: ApiSpec = {
  key: 18,
  name: 'ApiVersions',
  minVersion: 0,
  maxVersion: 3,
  flexibleFrom: 3,
  request: [field('clientSoftwareName', 'string', '3+'), field('clientSoftwareVersion', 'string', '3+')],
  response: [
    field('errorCode', 'int16', '0+'),
    arrayOf(
      'apiKeys',
      [field('apiKey', 'int16', '0+'), field('minVersion', 'int16', '0+'), field('maxVersion', 'int16', '0+')],
      '0+',
    ),
    field('throttleTimeMs', 'int32', '1+'),
  ],
};

// SaslHandshake{Request,Response}.json: validVersions 0-1, no flexible versions.
export const SASL_HANDSHAKE: ApiSpec = {
  key: 17,
  name: 'SaslHandshake',
  minVersion: 0,
  maxVersion: 1,
  flexibleFrom: undefined,
  request: [field('mechanism', 'string', '0+')],
  response: [field('errorCode', 'int16', '0+'), arrayOf('mechanisms', 'string', '0+')],
};

// SaslAuthenticate{Request,Response}.json: validVersions 0-2 (2 is flexible), served 0-1.
export const SASL_AUTHENTICATE: ApiSpec = {
  key: 36,
  name: 'SaslAuthenticate',
  minVersion: 0,
  maxVersion: 1,
  flexibleFrom: 2,
  request: [field('authBytes', 'bytes', '0+')],
  response: [
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    field('authBytes', 'bytes', '0+'),
    field('sessionLifetimeMs', 'int64', '1+'),
  ],
};

// InitProducerId{Request,Response}.json: validVersions 0-4, flexibleVersions 2+, served 0-1.
export const INIT_PRODUCER_ID: ApiSpec = {
  key: 22,
  name: 'InitProducerId',
  minVersion: 0,
  maxVersion: 1,
  flexibleFrom: 2,
  request: [
    field('transactionalId', 'string', '0+', { nullable: '0+', default: null }),
    field('transactionTimeoutMs', 'int32', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('producerId', 'int64', '0+', { default: -1n }),
    field('producerEpoch', 'int16', '0+'),
  ],
};
