import { invalidArgument, ErrorReason } from '@ledgerline/errors';

export const DEFAULT_REDIS_KEY_PREFIX = 'ledgerline:meta:';
const MAX_KEY_PREFIX_BYTES = 256;

export interface NodeKeys {
  /** Hash: v (value), ver, ct, mt, s (session id when ephemeral). */
  node: string;
  /** Sorted set of the parent's child names, all scored 0 so ZRANGEBYLEX pages them in byte order. */
  children: string;
  /** Hash of the parent's ephemeral children: name -> session id. */
  ephemeral: string;
}

/**
 * The Redis key layout. A node's keys are hash-tagged with its parent path,
 * so the node, its entry in the parent's child index and the parent's
 * ephemeral index share one cluster slot and change in one Lua script. A
 * session's keys are tagged by the session id; sequences by their name.
 *
 * Only the first `{...}` of a key is its tag, so `}` (and `%`, the escape
 * character) in a parent path are written as `%7D` and `%25`: the tag is then
 * exactly the whole parent path, and two different (parent, name) pairs can
 * never spell the same key (`/a}:node:b` + `c` against `/a` + `b}:node:c`).
 */
export class RedisKeys {
  constructor(readonly prefix: string) {
    if (typeof prefix !== 'string' || /[{}]/.test(prefix) || Buffer.byteLength(prefix) > MAX_KEY_PREFIX_BYTES) {
      throw invalidArgument(
        ErrorReason.INVALID_CONFIG,
        `keyPrefix must be a string of at most ${MAX_KEY_PREFIX_BYTES} bytes without { or }`,
      );
    }
  }

  node(parent: string, name: string): NodeKeys {
    const tag = `${this.prefix}{${escapeTag(parent)}}`;
    return { node: `${tag}:node:${name}`, children: `${tag}:children`, ephemeral: `${tag}:ephemeral` };
  }

  children(parent: string): { children: string; ephemeral: string } {
    const tag = `${this.prefix}{${escapeTag(parent)}}`;
    return { children: `${tag}:children`, ephemeral: `${tag}:ephemeral` };
  }

  /** String with a PEXPIRE: present exactly while the session lives. */
  session(id: string): string {
    return `${this.prefix}{session:${id}}`;
  }

  /** Set of the paths of the session's ephemeral nodes (may name nodes already gone), for cleanup. */
  sessionNodes(id: string): string {
    return `${this.prefix}{session:${id}}:nodes`;
  }

  /** Sorted set of every session id scored by its renewal deadline: where sweepers find dead owners. */
  sessionsIndex(): string {
    return `${this.prefix}{sessions}`;
  }

  sequence(name: string): string {
    return `${this.prefix}{seq:${name}}`;
  }
}

function escapeTag(parent: string): string {
  return parent.includes('%') || parent.includes('}') ? parent.replace(/%/g, '%25').replace(/\}/g, '%7D') : parent;
}
