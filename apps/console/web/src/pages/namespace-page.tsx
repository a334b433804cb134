import { useCallback, useEffect, useRef, useState } from 'react';
import { useParams } from 'react-router';
import type { TopicRow } from '@gen/console_pb';
import { consoleClient } from '../api/console-client';
import { useAuth } from '../api/auth-context';
import { toCallError, type CallError } from '../api/call-error';
import { useCall } from '../api/use-call';
import { CallView, ErrorBox, Facts } from '../components/call-view';
import { formatCount, formatTime } from '../format/units';
import { permissionLine, policyLine } from '../format/policies';
import { TopicList } from './topic-list';

/** Topics per page asked of the server: what fills a screen a few times over. */
const PAGE_SIZE = 200;

interface Listing {
  rows: TopicRow[];
  nextPageToken: string;
  namespaceTopicCount: bigint;
  buckets: number;
}

/** Pages of one namespace's topics under a prefix, fetched as the list scrolls. */
function useTopicPages(namespace: string, prefix: string) {
  const { askForToken, generation } = useAuth();
  const [listing, setListing] = useState<Listing>();
  const [error, setError] = useState<CallError>();
  const fetching = useRef<string | undefined>(undefined);

  const fetchPage = useCallback(
    async (pageToken: string, previous: TopicRow[]) => {
      const key = `${namespace}\n${prefix}\n${pageToken}`;
      if (fetching.current === key) return;
      fetching.current = key;
      try {
        const page = await consoleClient.browseTopics({ namespace, prefix, pageSize: PAGE_SIZE, pageToken });
        if (fetching.current !== key) return;
        setListing({
          rows: [...previous, ...page.topics],
          nextPageToken: page.nextPageToken,
          namespaceTopicCount: page.namespaceTopicCount,
          buckets: page.numberOfTopicBuckets,
        });
        setError(undefined);
      } catch (thrown) {
        const failure = toCallError(thrown);
        if (failure.unauthenticated) askForToken();
        setError(failure);
      }
    },
    [namespace, prefix, askForToken],
  );

  useEffect(() => {
    setListing(undefined);
    fetching.current = undefined;
    void fetchPage('', []).catch(() => undefined);
  }, [fetchPage, generation]);

  const loadMore = useCallback(() => {
    if (listing !== undefined && listing.nextPageToken !== '') {
      void fetchPage(listing.nextPageToken, listing.rows).catch(() => undefined);
    }
  }, [listing, fetchPage]);
  return { listing, error, loadMore };
}

export function NamespacePage() {
  const namespace = useParams()['namespace'] ?? '';
  const [prefix, setPrefix] = useState('');
  const summary = useCall(() => consoleClient.getNamespaceSummary({ namespace }), namespace);
  const { listing, error, loadMore } = useTopicPages(namespace, prefix);
  return (
    <section data-testid="namespace-page">
      <h1>{namespace}</h1>
      <CallView state={summary}>
        {(answer) =>
          answer.namespace && (
            <Facts
              testId="namespace-facts"
              rows={[
                ['topics', formatCount(answer.namespace.topicCount)],
                ['policies', policyLine(answer.namespace) || 'defaults'],
                ['permissions', permissionLine(answer.namespace)],
                ['created', formatTime(answer.namespace.createdAtMs)],
              ]}
            />
          )
        }
      </CallView>
      <h2>Topics</h2>
      <input
        type="search"
        placeholder="Search by prefix"
        value={prefix}
        onChange={(event) => setPrefix(event.target.value)}
        data-testid="topic-prefix"
      />
      {error !== undefined && <ErrorBox error={error} />}
      {listing === undefined ? (
        <p className="muted">Loading…</p>
      ) : (
        <>
          <p className="muted" data-testid="topic-count">
            {formatCount(listing.rows.length)} shown{listing.nextPageToken !== '' ? ' (more as you scroll)' : ''} of{' '}
            {formatCount(listing.namespaceTopicCount)} in the namespace, {listing.buckets} buckets
          </p>
          <TopicList rows={listing.rows} more={listing.nextPageToken !== ''} loadMore={loadMore} />
        </>
      )}
    </section>
  );
}
