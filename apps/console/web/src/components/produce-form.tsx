import { useState, type FormEvent } from 'react';
import { consoleClient } from '../api/console-client';
import { useAuth } from '../api/auth-context';
import { toCallError } from '../api/call-error';
import { parseProperties } from '../format/properties';
import { formatPosition } from '../format/units';

/** Publishes one message to the topic and says where it landed. */
export function ProduceForm({ topic, produced }: { topic: string; produced: () => void }) {
  const { askForToken } = useAuth();
  const [key, setKey] = useState('');
  const [properties, setProperties] = useState('');
  const [payload, setPayload] = useState('');
  const [outcome, setOutcome] = useState('');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    try {
      const answer = await consoleClient.produceMessage({
        topic,
        key: key === '' ? undefined : key,
        properties: parseProperties(properties),
        payload: new TextEncoder().encode(payload),
      });
      setOutcome(`Stored at offset ${answer.offset} (entry ${formatPosition(answer.position)}).`);
      produced();
    } catch (thrown) {
      const failure = toCallError(thrown);
      if (failure.unauthenticated) askForToken();
      setOutcome(`${failure.code} ${failure.reason}: ${failure.message}`);
    }
  };
  return (
    <form
      className="card produce"
      onSubmit={(event) => void submit(event).catch(() => undefined)}
      data-testid="produce-form"
    >
      <h2>Produce a message</h2>
      <label>
        key <input name="key" value={key} onChange={(event) => setKey(event.target.value)} />
      </label>
      <label>
        properties (name=value per line)
        <textarea
          name="properties"
          rows={2}
          value={properties}
          onChange={(event) => setProperties(event.target.value)}
        />
      </label>
      <label>
        payload
        <textarea name="payload" rows={4} value={payload} onChange={(event) => setPayload(event.target.value)} />
      </label>
      <button type="submit">Produce</button>
      {outcome !== '' && <p data-testid="produce-outcome">{outcome}</p>}
    </form>
  );
}
