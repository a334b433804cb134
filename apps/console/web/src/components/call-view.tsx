import type { ReactNode } from 'react';
import type { CallState } from '../api/use-call';

/** A page's data once it came, the error when it failed, "Loading" before either. */
export function CallView<T>({ state, children }: { state: CallState<T>; children: (data: T) => ReactNode }) {
  if (state.data !== undefined) {
    return (
      <>
        {state.error !== undefined && <ErrorBox error={state.error} />}
        {children(state.data)}
      </>
    );
  }
  if (state.error !== undefined) return <ErrorBox error={state.error} />;
  return <p className="muted">Loading…</p>;
}

export function ErrorBox({ error }: { error: { code: string; reason: string; message: string } }) {
  return (
    <div className="error" role="alert" data-testid="call-error">
      <strong>{error.code}</strong>
      {error.reason !== '' && <code> {error.reason}</code>}: {error.message}
    </div>
  );
}

/** Label/value pairs of one thing, two columns. */
export function Facts({ rows, testId }: { rows: [string, ReactNode][]; testId?: string }) {
  return (
    <dl className="facts" data-testid={testId}>
      {rows.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A plain table for short lists (at most a page of rows). */
export function Table({
  head,
  rows,
  testId,
  empty,
}: {
  head: string[];
  rows: ReactNode[][];
  testId?: string;
  empty?: string;
}) {
  if (rows.length === 0) return <p className="muted">{empty ?? 'None.'}</p>;
  return (
    <table data-testid={testId}>
      <thead>
        <tr>
          {head.map((label) => (
            <th key={label}>{label}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((cells, row) => (
          <tr key={row}>
            {cells.map((cell, column) => (
              <td key={column}>{cell}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
