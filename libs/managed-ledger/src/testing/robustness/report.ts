import type { RobustnessBackend } from './backend.js';

/** Trace lines printed with a failed history. */
const PRINTED_TRACE_LINES = 400;

/**
 * Runs a history and returns its violations; when tracing is on
 * (LEDGERLINE_ROBUSTNESS_TRACE; "all" for every history) and the history fails, the tail of the trace
 * of every call and fault is printed first.
 */
export async function traced(backend: RobustnessBackend, history: () => Promise<string[]>): Promise<string[]> {
  let failed = true;
  try {
    const violations = await history();
    failed = violations.length > 0;
    return violations;
  } finally {
    const always = process.env['LEDGERLINE_ROBUSTNESS_TRACE'] === 'all';
    if ((failed || always) && backend.trace !== undefined)
      console.log(backend.trace.slice(-PRINTED_TRACE_LINES).join('\n'));
    if (backend.trace !== undefined) backend.trace.length = 0;
  }
}
