import { LedgerlineError } from '@ledgerline/errors';
import { OwnerReason } from './reasons.js';
import { unloadOnRequest, type UnloadableTopics } from './unload-request.js';

type Answer = { owned: boolean; instanceId: string; advertisedAddress: string };

function owner(answer: Answer, asked: string[] = []) {
  const lookup = {
    lookupTopic: async (request: { topic: string }) => {
      asked.push(request.topic);
      return answer;
    },
  };
  return { clients: { lookup } as never, instanceId: 'me' };
}

function registry(loaded: string[]): UnloadableTopics<string> & { unloaded: [string, boolean][] } {
  const unloaded: [string, boolean][] = [];
  return {
    unloaded,
    find: (topic) => (loaded.includes(topic) ? topic : undefined),
    unloadTopic: async (topic, _why, release) => void unloaded.push([topic, release]),
  };
}

describe('unloadOnRequest', () => {
  const nobody: Answer = { owned: false, instanceId: '', advertisedAddress: '' };

  it('unloads a topic loaded here and releases its lease, without a lookup', async () => {
    const topics = registry(['t']);
    const asked: string[] = [];
    expect(await unloadOnRequest(topics, owner(nobody, asked), 't')).toEqual({});
    expect(topics.unloaded).toEqual([['t', true]]);
    expect(asked).toEqual([]);
  });

  it('refuses with NOT_OWNER naming the instance that holds the topic', async () => {
    const elsewhere = { owned: true, instanceId: 'other', advertisedAddress: 'other:6650' };
    const refused = unloadOnRequest(registry([]), owner(elsewhere), 't');
    await expect(refused).rejects.toBeInstanceOf(LedgerlineError);
    await expect(refused).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', reason: OwnerReason.NOT_OWNER });
    await expect(refused).rejects.toMatchObject({ message: expect.stringContaining('other:6650') });
  });

  it('answers done for a topic nobody holds, or held here but not loaded, looking up the lease name', async () => {
    const asked: string[] = [];
    expect(await unloadOnRequest(registry([]), owner(nobody, asked), 'r', 'persistent://a/b/r')).toEqual({});
    const mine = { owned: true, instanceId: 'me', advertisedAddress: 'me:6650' };
    expect(await unloadOnRequest(registry([]), owner(mine, asked), 'r')).toEqual({});
    expect(asked).toEqual(['persistent://a/b/r', 'r']);
  });
});
