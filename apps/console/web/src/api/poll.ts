/**
 * Runs `run` now and, when `everyMs` is set, again `everyMs` after each run
 * has finished: never two runs of one page in flight, however slow the
 * answers (a timer per interval piled calls up behind a slow server). While
 * `hidden()` (a tab in the background) no run starts; the next one waits for
 * the tab to show. Returns what stops it.
 */
export function pollAfterEach(
  run: () => Promise<void>,
  everyMs: number | undefined,
  hidden: () => boolean = () => typeof document !== 'undefined' && document.hidden,
): () => void {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const later = () => {
    if (!stopped && everyMs !== undefined) timer = setTimeout(next, everyMs);
  };
  // A failed run is the page's to show; polling goes on after it as after an answer.
  const once = () => {
    run().then(later, later);
  };
  const next = () => {
    if (stopped) return;
    if (hidden()) later();
    else once();
  };
  once();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
