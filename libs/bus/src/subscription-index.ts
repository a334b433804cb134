interface TrieNode<T> {
  literal: Map<string, TrieNode<T>>;
  star: TrieNode<T> | undefined;
  /** Subscribers whose pattern ends here. */
  here: Set<T>;
  /** Subscribers whose pattern ends here with `>`. */
  rest: Set<T>;
}

function emptyNode<T>(): TrieNode<T> {
  return { literal: new Map(), star: undefined, here: new Set(), rest: new Set() };
}

/**
 * Subscribers by pattern, as a token trie (the shape of nats-server's sublist):
 * matching a subject costs its token count times the wildcard fan-out, not the
 * number of subscriptions.
 */
export class SubscriptionIndex<T> {
  private readonly root: TrieNode<T> = emptyNode();
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(patternTokens: readonly string[], subscriber: T): void {
    let node = this.root;
    for (const token of patternTokens) {
      if (token === '>') {
        node.rest.add(subscriber);
        this.count++;
        return;
      }
      node = token === '*' ? (node.star ??= emptyNode()) : this.literalChild(node, token);
    }
    node.here.add(subscriber);
    this.count++;
  }

  remove(patternTokens: readonly string[], subscriber: T): void {
    const path: TrieNode<T>[] = [this.root];
    let node: TrieNode<T> | undefined = this.root;
    for (const token of patternTokens) {
      if (token === '>') break;
      node = token === '*' ? node.star : node.literal.get(token);
      if (node === undefined) return;
      path.push(node);
    }
    const last = patternTokens[patternTokens.length - 1] === '>' ? node.rest : node.here;
    if (last.delete(subscriber)) this.count--;
    this.prune(path, patternTokens);
  }

  match(subjectTokens: readonly string[]): T[] {
    const found: T[] = [];
    this.collect(this.root, subjectTokens, 0, found);
    return found;
  }

  private collect(node: TrieNode<T>, tokens: readonly string[], index: number, found: T[]): void {
    if (index < tokens.length) {
      for (const subscriber of node.rest) found.push(subscriber);
      const literal = node.literal.get(tokens[index] as string);
      if (literal !== undefined) this.collect(literal, tokens, index + 1, found);
      if (node.star !== undefined) this.collect(node.star, tokens, index + 1, found);
      return;
    }
    for (const subscriber of node.here) found.push(subscriber);
  }

  private literalChild(node: TrieNode<T>, token: string): TrieNode<T> {
    let child = node.literal.get(token);
    if (child === undefined) {
      child = emptyNode();
      node.literal.set(token, child);
    }
    return child;
  }

  // Removes nodes left empty, deepest first, so the trie does not keep every subject ever subscribed.
  private prune(path: TrieNode<T>[], patternTokens: readonly string[]): void {
    for (let depth = path.length - 1; depth > 0; depth--) {
      const node = path[depth] as TrieNode<T>;
      const isEmpty = node.here.size === 0 && node.rest.size === 0 && node.literal.size === 0 && !node.star;
      if (!isEmpty) return;
      const parent = path[depth - 1] as TrieNode<T>;
      const token = patternTokens[depth - 1] as string;
      if (token === '*') parent.star = undefined;
      else parent.literal.delete(token);
    }
  }
}
