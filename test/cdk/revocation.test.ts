import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_AUTHORIZER_CACHE_SECONDS } from '../../lib/config.js';
import { PROJECT_ROOT, removeOutput, type Synthesized, synthesize } from './synth.js';

/**
 * How long a revoked API key keeps working on AWS (issue 39): API Gateway keeps the authorizer's
 * verdict for a key for its TTL, so that TTL is the bound, and what the README and `npm run keys`
 * say must be it. (The authorizer's lookup is consistent: test/unit/authorizer.test.ts.)
 */

const ttlOf = (s: Synthesized) => {
  const authorizers = Object.values(s.template.findResources('AWS::ApiGatewayV2::Authorizer'));
  expect(authorizers).toHaveLength(1);
  return authorizers[0].Properties.AuthorizerResultTtlInSeconds as number;
};

/** The seconds a text says a revoked key is refused within, on AWS. */
const statedBound = (text: string) => {
  const found = [...text.matchAll(/within (\d+) s\b/g)].map((match) => Number(match[1]));
  expect(found.length).toBeGreaterThan(0);
  return found;
};

describe('a revoked API key on AWS', () => {
  let dev: Synthesized;
  let prod: Synthesized;
  beforeAll(() => {
    dev = synthesize({ bundle: false });
    prod = synthesize({ bundle: false, context: { stage: 'prod', alarmEmail: 'ops@example.com' } });
  });
  afterAll(() => {
    removeOutput(dev?.app);
    removeOutput(prod?.app);
  });

  it('is refused within the authorizer cache’s TTL, which is the bound the README and the CLI state', async () => {
    expect(ttlOf(dev)).toBe(DEFAULT_AUTHORIZER_CACHE_SECONDS);
    expect(ttlOf(prod)).toBe(DEFAULT_AUTHORIZER_CACHE_SECONDS);

    const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
    const revokeLine = readme.split('\n').find((line) => line.startsWith('npm run keys -- revoke'));
    expect(statedBound(revokeLine ?? '')).toEqual([DEFAULT_AUTHORIZER_CACHE_SECONDS]);
    expect(revokeLine).not.toMatch(/from the next request on(?!.*on AWS)/);

    const { main: keys } = await import('../../bin/keys.js');
    const help: string[] = [];
    const io = { out: (line: string) => help.push(line), err: () => {}, env: {} };
    await keys(['--help'], io);
    await keys(['revoke', '--help'], io);
    for (const bound of statedBound(help.join('\n').replace(/\n/g, ' ')))
      expect(bound).toBe(DEFAULT_AUTHORIZER_CACHE_SECONDS);
  });

  it('is refused within the TTL a deploy sets, which bounds it as the README says', () => {
    const shorter = synthesize({ bundle: false, context: { authorizerCacheSeconds: '15' } });
    try {
      expect(ttlOf(shorter)).toBe(15);
    } finally {
      removeOutput(shorter.app);
    }
    const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
    expect(readme).toMatch(/`authorizerCacheSeconds` \(60; 0 for none: how long a revoked key keeps working\)/);
  });
});
