import { MAX_OWNER_CLIENTS, OwnerControls } from './owner-controls.js';

describe('OwnerControls', () => {
  it('keeps one client per address, at most MAX_OWNER_CLIENTS, the least recently used going first', () => {
    const controls = new OwnerControls();
    try {
      const first = controls.to('10.0.0.1:6650');
      expect(controls.to('10.0.0.1:6650')).toBe(first);
      const second = controls.to('10.0.0.2:6650');
      for (let i = 3; i <= MAX_OWNER_CLIENTS; i++) controls.to(`10.0.${Math.floor(i / 250)}.${i % 250}:6650`);
      // Used again, the first address is the most recent: the next new one pushes out the second, the least.
      expect(controls.to('10.0.0.1:6650')).toBe(first);
      controls.to('10.9.9.9:6650');
      expect(controls.to('10.0.0.1:6650')).toBe(first);
      expect(controls.to('10.0.0.2:6650')).not.toBe(second);
    } finally {
      controls.close();
    }
  });

  it('forgets an address, and keeps only the live ones when asked', () => {
    const controls = new OwnerControls();
    try {
      const a = controls.to('a:6650');
      const b = controls.to('b:6650');
      controls.forget('a:6650');
      expect(controls.to('a:6650')).not.toBe(a);
      controls.retain(new Set(['a:6650']));
      expect(controls.to('b:6650')).not.toBe(b);
    } finally {
      controls.close();
    }
  });
});
