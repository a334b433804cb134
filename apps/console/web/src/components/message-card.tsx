import { useState } from 'react';
import type { BrowsedMessage } from '@gen/console_pb';
import { defaultView, payloadAsHex, payloadAsJson, payloadAsText, type PayloadView } from '../format/payload';
import { formatBytes, formatPosition, formatTime } from '../format/units';

function rendered(payload: Uint8Array, view: PayloadView): string {
  if (view === 'json') return payloadAsJson(payload) ?? 'Not JSON.';
  if (view === 'hex') return payloadAsHex(payload);
  return payloadAsText(payload);
}

/** One browsed message: where it is, its key and properties, its payload in the chosen view. */
export function MessageCard({ message }: { message: BrowsedMessage }) {
  const [view, setView] = useState<PayloadView>(() => defaultView(message.payload));
  const properties = Object.entries(message.properties);
  return (
    <article className="message" data-testid="message" data-offset={String(message.offset)}>
      <header>
        <strong>offset {String(message.offset)}</strong>
        <span>
          entry {formatPosition(message.position)}
          {message.batchIndex >= 0 && ` · batch index ${message.batchIndex}`}
        </span>
        <span>published {formatTime(message.publishTimeMs)}</span>
        {message.eventTimeMs > 0n && <span>event {formatTime(message.eventTimeMs)}</span>}
        <span>
          {formatBytes(message.payloadSizeBytes)}
          {message.payloadTruncated && ' (cut)'}
        </span>
      </header>
      <div className="muted">
        key: <code data-testid="message-key">{message.key ?? '(none)'}</code>
        {properties.length > 0 && (
          <>
            {' '}
            · properties:{' '}
            {properties.map(([name, value]) => (
              <code key={name}>
                {name}={value}{' '}
              </code>
            ))}
          </>
        )}
        {message.producerName !== '' && ` · producer ${message.producerName} #${message.sequenceId}`}
      </div>
      <div className="views" role="group" aria-label="payload view">
        {(['text', 'json', 'hex'] as const).map((name) => (
          <button key={name} type="button" aria-pressed={view === name} onClick={() => setView(name)}>
            {name}
          </button>
        ))}
      </div>
      <pre data-testid="payload" data-view={view}>
        {rendered(message.payload, view)}
      </pre>
    </article>
  );
}
