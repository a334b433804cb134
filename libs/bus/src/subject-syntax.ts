import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import { MAX_SUBJECT_BYTES } from './bus.js';
import { BusReason } from './bus-errors.js';

// Printable ASCII without space: what every NATS server and client accepts.
const TOKEN_CHARACTERS = /^[\x21-\x7e]+$/;

/** Checks a subject to publish on: tokens only, no wildcards. Returns its tokens. */
export function validateSubject(subject: string): string[] {
  const tokens = splitTokens(subject, 'subject');
  for (const token of tokens) {
    if (token === '*' || token === '>') {
      throw invalidArgument(BusReason.BAD_SUBJECT, `cannot publish on the wildcard subject '${subject}'`, { subject });
    }
  }
  return tokens;
}

/** Checks a subscription pattern: `*` stands for one token, `>` (last only) for the rest. Returns its tokens. */
export function validateSubjectPattern(pattern: string): string[] {
  const tokens = splitTokens(pattern, 'pattern');
  tokens.forEach((token, index) => {
    if (token === '>' && index !== tokens.length - 1) {
      throw invalidArgument(BusReason.BAD_SUBJECT, `'>' must be the last token of the pattern '${pattern}'`, {
        pattern,
      });
    }
  });
  return tokens;
}

/** True when the subject's tokens match the pattern's, with NATS wildcard rules. */
export function subjectMatches(patternTokens: readonly string[], subjectTokens: readonly string[]): boolean {
  for (let i = 0; i < patternTokens.length; i++) {
    const want = patternTokens[i];
    if (want === '>') return subjectTokens.length > i;
    if (i >= subjectTokens.length) return false;
    if (want !== '*' && want !== subjectTokens[i]) return false;
  }
  return patternTokens.length === subjectTokens.length;
}

function splitTokens(text: string, what: 'subject' | 'pattern'): string[] {
  if (typeof text !== 'string' || text.length === 0) {
    throw invalidArgument(BusReason.BAD_SUBJECT, `the ${what} must be a non-empty string`);
  }
  if (Buffer.byteLength(text, 'utf8') > MAX_SUBJECT_BYTES) {
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      BusReason.SUBJECT_TOO_LONG,
      `the ${what} is longer than ${MAX_SUBJECT_BYTES} bytes`,
      { details: { prefix: text.slice(0, 80) } },
    );
  }
  const tokens = text.split('.');
  for (const token of tokens) {
    if (!TOKEN_CHARACTERS.test(token)) {
      throw invalidArgument(
        BusReason.BAD_SUBJECT,
        `the ${what} '${text.slice(0, 200)}' has an empty token or a character outside printable ASCII`,
        { [what]: text.slice(0, 200) },
      );
    }
  }
  return tokens;
}
