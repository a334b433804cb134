import { Writable } from 'node:stream';
import { createLogger, resolveLogFormat } from './logger.js';

function capture(): { stream: Writable; lines: () => Record<string, unknown>[]; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  return {
    stream,
    text: () => chunks.join(''),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('createLogger', () => {
  it('writes one JSON object per line with the service name', () => {
    const out = capture();
    const logger = createLogger('metadata', { destination: out.stream });
    logger.info({ topic: 'persistent://t/n/x' }, 'created');
    expect(out.lines()).toEqual([
      expect.objectContaining({
        service: 'metadata',
        name: 'metadata',
        msg: 'created',
        topic: 'persistent://t/n/x',
        level: 30,
      }),
    ]);
  });

  it('writes lines for people when stdout is a terminal, and JSON lines when it is not', () => {
    const terminal = capture();
    createLogger('standalone', { stdoutIsTty: true, destination: terminal.stream }).info({ topic: 'x' }, 'started');
    expect(terminal.text()).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(standalone\): started\n/);
    expect(terminal.text()).toContain('topic: "x"');
    expect(terminal.text()).not.toContain('"msg"');
    const piped = capture();
    createLogger('standalone', { stdoutIsTty: false, destination: piped.stream }).info('started');
    expect(piped.lines()).toEqual([expect.objectContaining({ msg: 'started', service: 'standalone' })]);
  });

  it('keeps a format that is asked for, terminal or not', () => {
    const forcedJson = capture();
    createLogger('standalone', { format: 'json', stdoutIsTty: true, destination: forcedJson.stream }).info('json');
    expect(forcedJson.lines()).toEqual([expect.objectContaining({ msg: 'json' })]);
    const forcedPretty = capture();
    createLogger('standalone', { format: 'pretty', stdoutIsTty: false, destination: forcedPretty.stream }).warn(
      'lines',
    );
    expect(forcedPretty.text()).toMatch(/WARN \(standalone\): lines/);
    expect(resolveLogFormat('auto', true)).toBe('pretty');
    expect(resolveLogFormat('auto', false)).toBe('json');
  });

  it('drops messages below the configured level', () => {
    const out = capture();
    const logger = createLogger('gc', { level: 'warn', destination: out.stream });
    logger.info('hidden');
    logger.warn('shown');
    expect(out.lines().map((line) => line.msg)).toEqual(['shown']);
  });
});
