import fc from 'fast-check';
import { LedgerlineError } from '@ledgerline/errors';
import { subjectMatches, validateSubject, validateSubjectPattern } from './subject-syntax.js';
import {
  decodeSubjectToken,
  encodeSubjectToken,
  ledgerLacSubject,
  managedLedgerSubject,
  metadataChangedSubject,
  metadataChildrenPattern,
  metadataTreePattern,
  pathOfMetadataSubject,
} from './subjects.js';

// Well-formed strings (no lone surrogates) without '/', like the segments of a valid metadata path.
const segment = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).filter((s) => !s.includes('/'));
const path = fc.array(segment, { minLength: 1, maxLength: 6 }).map((segments) => `/${segments.join('/')}`);

describe('metadata subjects', () => {
  it('turn any path into a valid subject and back', () => {
    fc.assert(
      fc.property(path, (p) => {
        const subject = metadataChangedSubject(p);
        expect(validateSubject(subject)).toHaveLength(2 + p.split('/').length - 1);
        expect(pathOfMetadataSubject(subject)).toBe(p);
      }),
      { numRuns: 300 },
    );
  });

  it('escape every character that would change the meaning of a subject', () => {
    expect(metadataChangedSubject('/a.b/*/>/ x/%')).toBe('ledgerline.meta.a%2Eb.%2A.%3E.%20x.%25');
    expect(metadataChangedSubject('/managed-ledgers/t/ns/persistent/my_topic')).toBe(
      'ledgerline.meta.managed-ledgers.t.ns.persistent.my_topic',
    );
    expect(metadataChangedSubject('/')).toBe('ledgerline.meta');
    expect(pathOfMetadataSubject('ledgerline.meta')).toBe('/');
    expect(encodeSubjectToken('ü')).toBe('%C3%BC');
  });

  it('tree and children patterns match descendants and children only', () => {
    fc.assert(
      fc.property(path, segment, segment, (prefix, child, grandchild) => {
        const tree = validateSubjectPattern(metadataTreePattern(prefix));
        const children = validateSubjectPattern(metadataChildrenPattern(prefix));
        const at = (p: string) => validateSubject(metadataChangedSubject(p));
        expect(subjectMatches(tree, at(`${prefix}/${child}`))).toBe(true);
        expect(subjectMatches(tree, at(`${prefix}/${child}/${grandchild}`))).toBe(true);
        expect(subjectMatches(tree, at(prefix))).toBe(false);
        expect(subjectMatches(children, at(`${prefix}/${child}`))).toBe(true);
        expect(subjectMatches(children, at(`${prefix}/${child}/${grandchild}`))).toBe(false);
        expect(subjectMatches(tree, at(`${prefix}x/${child}`))).toBe(false);
      }),
      { numRuns: 200 },
    );
    expect(metadataTreePattern('/')).toBe('ledgerline.meta.>');
  });

  it('reject tokens and subjects they could not have produced', () => {
    for (const token of ['', 'a.b', '%2', '%zz', 'ü', '%C3']) {
      expect(() => decodeSubjectToken(token)).toThrow(LedgerlineError);
    }
    expect(() => pathOfMetadataSubject('other.meta.a')).toThrow(LedgerlineError);
    expect(() => metadataChangedSubject('relative')).toThrow(LedgerlineError);
  });
});

describe('ledger and managed ledger subjects', () => {
  it('name a ledger by id and a managed ledger by its escaped name', () => {
    expect(ledgerLacSubject(42)).toBe('ledgerline.ledger.42.lac');
    expect(() => ledgerLacSubject(-1)).toThrow(expect.objectContaining({ reason: 'BAD_LEDGER_ID' }));
    expect(() => ledgerLacSubject(1.5)).toThrow(LedgerlineError);
    expect(managedLedgerSubject('t/ns/persistent/a%2Fb')).toBe('ledgerline.managed-ledger.t.ns.persistent.a%252Fb');
    expect(() => managedLedgerSubject('/t/ns')).toThrow(expect.objectContaining({ reason: 'BAD_MANAGED_LEDGER_NAME' }));
  });
});
