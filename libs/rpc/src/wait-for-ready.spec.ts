import { freePort, refusal } from '@ledgerline/testing';
import { closeClient, createClient } from './create-client.js';
import { TestService } from './testing/test-service.js';
import { startTestServer } from './testing/test-server.js';

describe('waitForReady: a first call to a server that is still starting', () => {
  it('waits within its deadline for the server to listen, where a call without it fails at once', async () => {
    const port = await freePort();
    const client = createClient(TestService, `127.0.0.1:${port}`);
    try {
      const refused = await refusal(client.echo({ text: 'too early' }, { deadlineMs: 20_000 }));
      expect(refused.code).toBe('UNAVAILABLE');
      const waiting = client.echo({ text: 'patient' }, { deadlineMs: 20_000, waitForReady: true });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const server = await startTestServer({}, {}, port);
      try {
        expect((await waiting).text).toBe('patient');
      } finally {
        await server.stop();
      }
    } finally {
      closeClient(client);
    }
  });

  it('still ends at its deadline when the server never comes', async () => {
    const client = createClient(TestService, `127.0.0.1:${await freePort()}`);
    try {
      const refused = await refusal(client.echo({ text: 'alone' }, { deadlineMs: 500, waitForReady: true }));
      expect(refused.code).toBe('DEADLINE_EXCEEDED');
    } finally {
      closeClient(client);
    }
  });
});
