import fc from 'fast-check';
import { subjectMatches } from './subject-syntax.js';
import { SubscriptionIndex } from './subscription-index.js';

const token = fc.constantFrom('a', 'b', 'c');
const subject = fc.array(token, { minLength: 1, maxLength: 4 });
const pattern = fc
  .array(fc.constantFrom('a', 'b', '*'), { minLength: 1, maxLength: 4 })
  .chain((tokens) => fc.boolean().map((rest) => (rest ? [...tokens.slice(0, -1), '>'] : tokens)));

describe('SubscriptionIndex', () => {
  it('finds exactly the subscriptions whose pattern matches, also after removals', () => {
    fc.assert(
      fc.property(
        fc.array(pattern, { maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        subject,
        (patterns, removals, s) => {
          const index = new SubscriptionIndex<number>();
          const live = new Map<number, string[]>();
          patterns.forEach((p, id) => {
            index.add(p, id);
            live.set(id, p);
          });
          for (const removal of removals) {
            const id = patterns.length === 0 ? 0 : removal % patterns.length;
            const p = live.get(id);
            if (p !== undefined) index.remove(p, id);
            live.delete(id);
          }
          const expected = [...live].filter(([, p]) => subjectMatches(p, s)).map(([id]) => id);
          expect(index.match(s).sort((x, y) => x - y)).toEqual(expected);
          expect(index.size).toBe(live.size);
        },
      ),
      { numRuns: 300 },
    );
  });
});
