import { supportedApiVersions } from '@ledgerline/kafka-protocol';
import { API_HANDLERS } from './index.js';

describe('the APIs the gateway serves', () => {
  it('advertises in ApiVersions exactly the APIs it has a handler for', () => {
    const advertised = supportedApiVersions()
      .map((api) => api.apiKey)
      .sort((a, b) => a - b);
    expect([...API_HANDLERS.keys()].sort((a, b) => a - b)).toEqual(advertised);
  });
});
