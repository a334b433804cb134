import { Writable } from 'node:stream';
import { createLogger } from './logger.js';

function capture(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  return {
    stream,
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

  it('drops messages below the configured level', () => {
    const out = capture();
    const logger = createLogger('gc', { level: 'warn', destination: out.stream });
    logger.info('hidden');
    logger.warn('shown');
    expect(out.lines().map((line) => line.msg)).toEqual(['shown']);
  });
});
