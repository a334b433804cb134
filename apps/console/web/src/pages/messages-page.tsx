import { useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import type { BrowseMessagesRequest } from '@gen/console_pb';
import { consoleClient } from '../api/console-client';
import { useCall } from '../api/use-call';
import { CallView } from '../components/call-view';
import { MessageCard } from '../components/message-card';
import { ProduceForm } from '../components/produce-form';
import { paths } from '../paths';

const MESSAGES_PER_PAGE = 50;

type Start = BrowseMessagesRequest['start'];

/** Where a browse starts from the form's fields; a time is the browser's local time. */
function startFrom(mode: 'offset' | 'time', offset: string, time: string): Start {
  if (mode === 'time') return { case: 'timestampMs', value: BigInt(new Date(time).getTime() || 0) };
  return { case: 'offset', value: BigInt(offset.trim() === '' ? '0' : offset.trim()) };
}

function startKey(start: Start): string {
  return `${start.case}:${String(start.value)}`;
}

function BrowseForm({ onBrowse }: { onBrowse: (start: Start) => void }) {
  const [mode, setMode] = useState<'offset' | 'time'>('offset');
  const [offset, setOffset] = useState('0');
  const [time, setTime] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onBrowse(startFrom(mode, offset, time));
  };
  return (
    <form className="browse-form" onSubmit={submit} data-testid="browse-form">
      <select name="mode" value={mode} onChange={(event) => setMode(event.target.value as 'offset' | 'time')}>
        <option value="offset">from offset</option>
        <option value="time">from time</option>
      </select>
      {mode === 'offset' ? (
        <input name="offset" inputMode="numeric" value={offset} onChange={(event) => setOffset(event.target.value)} />
      ) : (
        <input
          name="time"
          type="datetime-local"
          step="1"
          value={time}
          onChange={(event) => setTime(event.target.value)}
        />
      )}
      <button type="submit">Read</button>
    </form>
  );
}

export function MessagesPage() {
  const topic = useParams()['topic'] ?? '';
  const [start, setStart] = useState<Start>({ case: 'offset', value: 0n });
  const state = useCall(
    () => consoleClient.browseMessages({ topic, start, maxMessages: MESSAGES_PER_PAGE }),
    `${topic}\n${startKey(start)}`,
  );
  return (
    <section data-testid="messages-page">
      <h1>
        Messages <span className="muted">of</span> <Link to={paths.topic(topic)}>{topic}</Link>
      </h1>
      <BrowseForm onBrowse={setStart} />
      <CallView state={state}>
        {(answer) => (
          <>
            <p className="muted" data-testid="browse-range">
              Offsets {String(answer.earliestOffset)} … {String(answer.latestOffset - 1n)} retained; showing from{' '}
              {String(answer.startOffset)}
              {answer.beforeEarliest && ' (the offset asked for was trimmed: starting at the earliest)'}.
            </p>
            {answer.messages.map((message) => (
              <MessageCard key={String(message.offset)} message={message} />
            ))}
            {answer.messages.length === 0 && <p className="muted">No messages from there.</p>}
            {answer.nextOffset < answer.latestOffset && (
              <button type="button" onClick={() => setStart({ case: 'offset', value: answer.nextOffset })}>
                Next {MESSAGES_PER_PAGE}
              </button>
            )}
          </>
        )}
      </CallView>
      <ProduceForm topic={topic} produced={state.reload} />
    </section>
  );
}
