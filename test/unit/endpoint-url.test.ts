import { endpointUrlProblem, isForbiddenAddress, type Resolve } from '../../shared/domain/endpoint-url.js';

const resolvesTo =
  (table: Record<string, string[]>): Resolve =>
  async (host) => {
    if (!(host in table)) throw new Error('ENOTFOUND');
    return table[host];
  };

const aws = (table: Record<string, string[]> = {}) => ({ local: false, resolve: resolvesTo(table) });
const local = (table: Record<string, string[]> = {}) => ({ local: true, resolve: resolvesTo(table) });

describe('endpoint URL rules (SSRF)', () => {
  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '169.254.1.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '::ffff:10.1.2.3',
    '64:ff9b::a9fe:a9fe',
    'not an address',
  ])('forbids %s', (address) => expect(isForbiddenAddress(address)).toBe(true));

  it.each(['93.184.215.14', '172.32.0.1', '2606:2800:21f:cb07:6820:80da:af6b:8b2c', '::ffff:5db8:d70e'])(
    'allows the public address %s',
    (address) => expect(isForbiddenAddress(address)).toBe(false),
  );

  it('accepts an https URL whose name resolves only to public addresses', async () => {
    await expect(
      endpointUrlProblem('https://hooks.example.com/in', aws({ 'hooks.example.com': ['93.184.215.14'] })),
    ).resolves.toBeUndefined();
  });

  it.each([
    ['127.0.0.1'],
    ['10.1.2.3'],
    ['169.254.169.254'],
    ['::1'],
    ['93.184.215.14', 'fd00:ec2::254'],
    ['::ffff:169.254.169.254'],
  ])('refuses a name that resolves to %s (every address is checked)', async (...addresses) => {
    const problem = await endpointUrlProblem('https://evil.example/', aws({ 'evil.example': addresses }));
    expect(problem).toMatch(/loopback, private, link-local or metadata/);
    expect(problem).not.toContain(addresses[0]);
  });

  it.each([
    'https://127.0.0.1/',
    'https://[::1]/',
    'https://[::ffff:7f00:1]/',
    'https://2130706433/',
    'https://0x7f.1/',
    'https://169.254.169.254/latest/meta-data',
    'https://[fd00:ec2::254]/',
    'https://0.0.0.0/',
  ])('refuses the literal %s without resolving it', async (url) => {
    await expect(endpointUrlProblem(url, aws())).resolves.toMatch(/loopback, private/);
  });

  it('requires https on AWS, even for localhost', async () => {
    await expect(endpointUrlProblem('http://hooks.example.com/', aws())).resolves.toBe('must be https://');
    await expect(endpointUrlProblem('http://127.0.0.1:8080/', aws())).resolves.toBe('must be https://');
    await expect(endpointUrlProblem('https://localhost/', aws({ localhost: ['127.0.0.1'] }))).resolves.toMatch(
      /loopback/,
    );
  });

  it('allows http://127.0.0.1 and http://localhost locally, and nothing else private', async () => {
    await expect(endpointUrlProblem('http://127.0.0.1:9999/hook', local())).resolves.toBeUndefined();
    await expect(endpointUrlProblem('http://localhost:9999/hook', local())).resolves.toBeUndefined();
    await expect(endpointUrlProblem('http://10.0.0.1/hook', local())).resolves.toMatch(/https/);
    await expect(endpointUrlProblem('https://10.0.0.1/hook', local())).resolves.toMatch(/private/);
  });

  it('refuses what is not a URL, credentials, other schemes and names that do not resolve', async () => {
    await expect(endpointUrlProblem('hooks.example.com', aws())).resolves.toBe('must be an absolute URL');
    await expect(endpointUrlProblem('https://u:p@hooks.example.com/', aws())).resolves.toBe(
      'must not carry credentials',
    );
    await expect(endpointUrlProblem('ftp://hooks.example.com/', aws())).resolves.toBe('must be https://');
    await expect(endpointUrlProblem('https://nowhere.example/', aws())).resolves.toBe('must name a host that resolves');
    await expect(endpointUrlProblem('https://empty.example/', aws({ 'empty.example': [] }))).resolves.toBe(
      'must name a host that resolves',
    );
  });
});
