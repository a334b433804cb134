import { fromBinary } from '@bufbuild/protobuf';
import type { MetadataStore } from '@ledgerline/metadata-store';
import { decodeLocalName, NamespaceName, topicListingPaths } from '@ledgerline/naming';
import { ManagedCursorInfoSchema, ManagedLedgerInfoSchema, ManagedLedgerState } from '@ledgerline/proto';
import { deletingTopicsDir, partitionedTopicsDir } from '../records/layout.js';
import { forEachChildPage } from '../records/store-records.js';

/**
 * What a namespace's store really holds, read node by node without the
 * service's own logic: the ground truth crash and race tests compare the
 * service's answers (count, listing) against.
 */
export interface NamespaceContents {
  /** Local names of topics whose managed-ledger node is active. */
  live: string[];
  /** Local names of topics marked DELETING, with the ledger ids still awaiting the garbage collector. */
  deleting: Map<string, bigint[]>;
  /** Local names with a deletion marker under /admin/deleting-topics. */
  markers: Set<string>;
  /** Local names of partitioned topics (their records). */
  partitioned: Set<string>;
  /** Every ledger id a node references: in its ledger list, its deletable set, or a cursor node. */
  referencedLedgers: Set<bigint>;
}

async function childNames(store: MetadataStore, dir: string): Promise<string[]> {
  const names: string[] = [];
  await forEachChildPage(store, dir, (page) => {
    names.push(...page);
  });
  return names;
}

export async function inspectNamespace(
  store: MetadataStore,
  namespaceName: string,
  buckets: number,
): Promise<NamespaceContents> {
  const namespace = NamespaceName.parse(namespaceName);
  const contents: NamespaceContents = {
    live: [],
    deleting: new Map(),
    markers: new Set((await childNames(store, deletingTopicsDir(namespace))).map(decodeLocalName)),
    partitioned: new Set((await childNames(store, partitionedTopicsDir(namespace))).map(decodeLocalName)),
    referencedLedgers: new Set(),
  };
  for (const dir of topicListingPaths(namespace, buckets)) {
    for (const encoded of await childNames(store, dir)) {
      if (encoded.startsWith('$')) continue;
      const node = await store.get(`${dir}/${encoded}`);
      if (node === undefined) continue;
      const info = fromBinary(ManagedLedgerInfoSchema, node.value);
      for (const ledger of info.ledgerInfo) contents.referencedLedgers.add(ledger.ledgerId);
      for (const ledger of info.deletableLedgers) contents.referencedLedgers.add(ledger.ledgerId);
      for (const cursor of await childNames(store, `${dir}/${encoded}`)) {
        const cursorNode = await store.get(`${dir}/${encoded}/${cursor}`);
        if (cursorNode === undefined) continue;
        const cursorLedgerId = fromBinary(ManagedCursorInfoSchema, cursorNode.value).cursorsLedgerId;
        if (cursorLedgerId > 0n) contents.referencedLedgers.add(cursorLedgerId);
      }
      const name = decodeLocalName(encoded);
      if (info.state === ManagedLedgerState.DELETING) {
        contents.deleting.set(
          name,
          info.deletableLedgers.map((ledger) => ledger.ledgerId),
        );
      } else {
        contents.live.push(name);
      }
    }
  }
  contents.live.sort();
  return contents;
}
