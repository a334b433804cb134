import { RecentEvents } from './recent-events.js';

describe('RecentEvents', () => {
  it('keeps the last lines with their times and passes each on', () => {
    const passed: string[] = [];
    const events = new RecentEvents((line) => passed.push(line));
    for (let index = 0; index < 250; index++) events.log(`line ${index}`);
    const timeline = events.timeline();
    expect(timeline).toHaveLength(200);
    expect(timeline[0]).toMatch(/^\d{4}-\d\d-\d\dT\S+Z line 50$/);
    expect(timeline[199]).toMatch(/ line 249$/);
    expect(passed).toHaveLength(250);
  });
});
