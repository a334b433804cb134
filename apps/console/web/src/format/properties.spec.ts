import { parseProperties } from './properties';

describe('properties typed one name=value a line', () => {
  it('splits at the first =, trims, skips lines without a name and lets a later name win', () => {
    expect(parseProperties('region = eu-west\nquery=a=b\n\n=orphan\nnot a pair\nregion=us-east')).toEqual({
      region: 'us-east',
      query: 'a=b',
    });
  });
});
