import { invalidArgument } from '@ledgerline/errors';
import { errorToStatus } from './error-wire.js';

const SPEC_REASON = { INVALID_PATH: 'INVALID_PATH' } as const;

describe('errorToStatus', () => {
  it('sends a message that echoes a lone surrogate in a form grpc-js can percent-encode', () => {
    const status = errorToStatus(invalidArgument(SPEC_REASON.INVALID_PATH, 'bad path /a\ud800b'));
    expect(() => encodeURI(status.details!)).not.toThrow();
    expect(status.details).toBe('bad path /a\ufffdb');
  });
});
