import { useCallback, useEffect, useRef, useState } from 'react';
import { useAuth } from './auth-context';
import { toCallError, type CallError } from './call-error';
import { pollAfterEach } from './poll';

export interface CallState<T> {
  readonly data: T | undefined;
  readonly error: CallError | undefined;
  readonly loading: boolean;
  reload(): void;
}

/**
 * Runs `call` when the page opens, again when `key` changes or a token is
 * given, and `refreshMs` after each answer when set (pollAfterEach: one call
 * in flight at most, none while the tab is hidden). An Unauthenticated answer
 * opens the token prompt. Answers of an older key never overwrite a newer one.
 */
export function useCall<T>(call: () => Promise<T>, key: string, refreshMs?: number): CallState<T> {
  const { generation, askForToken } = useAuth();
  const [data, setData] = useState<T>();
  const [error, setError] = useState<CallError>();
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  const callRef = useRef(call);
  callRef.current = call;

  useEffect(() => {
    const ticket = ++latest.current;
    setLoading(true);
    return pollAfterEach(
      () =>
        callRef.current().then(
          (answer) => {
            if (ticket !== latest.current) return;
            setData(answer);
            setError(undefined);
            setLoading(false);
          },
          (thrown: unknown) => {
            if (ticket !== latest.current) return;
            const failure = toCallError(thrown);
            if (failure.unauthenticated) askForToken();
            setError(failure);
            setLoading(false);
          },
        ),
      refreshMs,
    );
  }, [key, generation, tick, askForToken, refreshMs]);

  const reload = useCallback(() => setTick((value) => value + 1), []);
  return { data, error, loading, reload };
}
