import { rendezvousPick } from './rendezvous.js';

const owners = ['a', 'b', 'c', 'd'];
const keys = Array.from({ length: 400 }, (_, i) => `persistent://t/ns/topic-${i}`);
const id = (owner: string) => owner;

describe('rendezvousPick', () => {
  it('picks nothing from no candidates', () => {
    expect(rendezvousPick([], id, 'k')).toBeUndefined();
  });

  it('picks the same candidate whatever their order', () => {
    for (const key of keys.slice(0, 50)) {
      expect(rendezvousPick([...owners].reverse(), id, key)).toBe(rendezvousPick(owners, id, key));
    }
  });

  it('spreads keys over every candidate', () => {
    const counts = new Map<string, number>();
    for (const key of keys) {
      const owner = rendezvousPick(owners, id, key)!;
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(owners);
    for (const count of counts.values()) expect(count).toBeGreaterThan(50);
  });

  it('moves only the keys of a candidate that leaves', () => {
    const without = owners.filter((owner) => owner !== 'c');
    for (const key of keys) {
      const before = rendezvousPick(owners, id, key);
      if (before !== 'c') expect(rendezvousPick(without, id, key)).toBe(before);
    }
  });
});
